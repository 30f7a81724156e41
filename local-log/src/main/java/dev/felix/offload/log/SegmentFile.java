package dev.felix.offload.log;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * A segment of a shard directory: its id (the number in its file name, which is not an offset),
 * its data file {@code <id>.log} and its index file {@code <id>.index}. Names are the id zero-padded
 * to 20 digits; order is always by the parsed number, never by directory iteration.
 *
 * @param id    the segment id, an unsigned 64-bit number
 * @param log   the segment data file
 * @param index the companion index file (it may not exist)
 */
public record SegmentFile(long id, Path log, Path index) {

    public static final String LOG_SUFFIX = ".log";
    public static final String INDEX_SUFFIX = ".index";
    private static final Pattern LOG_NAME = Pattern.compile("\\d{20}\\.log");

    /** Sorts by segment id, read as unsigned. */
    public static final Comparator<SegmentFile> BY_ID = (a, b) -> Long.compareUnsigned(a.id, b.id);

    /** The segment {@code id} of {@code shardDir}. */
    public static SegmentFile in(Path shardDir, long id) {
        return new SegmentFile(id, shardDir.resolve(logName(id)), shardDir.resolve(indexName(id)));
    }

    /** {@code 00000000000000000007.log} for id 7. */
    public static String logName(long id) {
        return padded(id) + LOG_SUFFIX;
    }

    /** {@code 00000000000000000007.index} for id 7. */
    public static String indexName(long id) {
        return padded(id) + INDEX_SUFFIX;
    }

    private static String padded(long id) {
        String digits = Long.toUnsignedString(id);
        return "0".repeat(20 - digits.length()) + digits;
    }

    /** The id named by a segment data file name, or empty when the name is not one. */
    public static OptionalLong parseLogName(String fileName) {
        if (!LOG_NAME.matcher(fileName).matches()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseUnsignedLong(fileName.substring(0, 20)));
        } catch (NumberFormatException e) {
            return OptionalLong.empty(); // 20 digits above 2^64 - 1
        }
    }

    /** The segments of a shard directory, ordered by id; files that are not segment data are ignored. */
    public static List<SegmentFile> list(Path shardDir) throws IOException {
        List<SegmentFile> segments = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(shardDir)) {
            for (Path entry : entries) {
                OptionalLong id = parseLogName(entry.getFileName().toString());
                if (id.isPresent() && Files.isRegularFile(entry)) {
                    segments.add(in(shardDir, id.getAsLong()));
                }
            }
        }
        segments.sort(BY_ID);
        return segments;
    }

    /** The file name of the data file. */
    public String logName() {
        return log.getFileName().toString();
    }

    /** The file name of the index file. */
    public String indexName() {
        return index.getFileName().toString();
    }
}
