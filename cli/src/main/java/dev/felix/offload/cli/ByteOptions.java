package dev.felix.offload.cli;

import dev.felix.offload.daemon.ConfigValues;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Byte counts on the command line, read as the configuration file reads them ({@link ConfigValues#bytes}):
 * digits with an optional unit, {@code B}, {@code KiB} ... {@code TiB} or {@code KB} ... {@code TB}.
 * One grammar for options: an option never refuses a unit its configuration key takes.
 */
final class ByteOptions {

    static final String UNITS = "optionally with a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)";

    private ByteOptions() {
    }

    /** A number of bytes >= 0. */
    static final class Count implements ITypeConverter<Long> {
        @Override
        public Long convert(String text) {
            Long n = ConfigValues.bytes(text);
            if (n == null || n < 0) {
                throw new TypeConversionException("expected a number of bytes >= 0, " + UNITS + ", got '" + text + "'");
            }
            return n;
        }
    }

    /** A number of bytes >= 0 that fits an int (sizes of one record, say). */
    static final class IntCount implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String text) {
            Long n = new Count().convert(text);
            if (n > Integer.MAX_VALUE) {
                throw new TypeConversionException("expected at most " + Integer.MAX_VALUE + " bytes, got '" + text + "'");
            }
            return n.intValue();
        }
    }
}
