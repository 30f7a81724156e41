package dev.felix.offload.scrub;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The data root's {@value #FILE_NAME} file: where the daemon's scheduled scrubs have got to, so a
 * restarted daemon goes on where the last run's request budget ran out, and goes on rotating the
 * share of objects it reads in full, instead of starting both again (at tens of thousands of shards
 * with a budget, every restart would check the first shards again and the last ones never).
 *
 * <pre>
 * felix-offload scrub progress 1           first line, exactly ({@link #HEADER})
 * runs=1048581                             scheduled runs so far (decimal, 0 or more): the next run's share
 * resume-at=acme_default_s-0_1-9f2d@4096   optional: where the next run starts, SHARD@OFFSET (--start-at's form)
 * </pre>
 *
 * Lines are {@code name=value} in printable ASCII, each name once; at most {@value #MAX_BYTES} bytes,
 * checked before the file is read. Written whole through {@link DurableFiles} after each run that was
 * not stopped. It is a hint: a file that is absent, too large or breaks a rule is ignored with a
 * warning (the next run starts at the first entry, as a first run does) and replaced by the next save;
 * it never decides what is kept or deleted. A plain undotted file at the root, so never read as a shard.
 */
public final class ScrubProgressFile {

    public static final String FILE_NAME = "offload-scrub-progress";
    public static final String HEADER = "felix-offload scrub progress 1";
    static final int MAX_BYTES = 4096;
    private static final String RUNS = "runs";
    private static final String RESUME_AT = "resume-at";

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ScrubProgressFile.class);

    /** What the file holds. */
    public record Progress(long runs, Optional<Scrub.Cursor> resumeAt) {
        public Progress {
            if (runs < 0) {
                throw new IllegalArgumentException("runs must not be negative: " + runs);
            }
            java.util.Objects.requireNonNull(resumeAt, "resumeAt");
        }
    }

    /** The bytes break the layout; nothing in them is believed. */
    public static final class UnreadableException extends Exception {
        private static final long serialVersionUID = 1L;

        UnreadableException(String why) {
            super(why);
        }
    }

    private final Path file;

    public ScrubProgressFile(DataRoot root) {
        this.file = root.path().resolve(FILE_NAME);
    }

    public Path file() {
        return file;
    }

    public static byte[] encode(Progress p) {
        StringBuilder out = new StringBuilder(HEADER).append('\n').append(RUNS).append('=').append(p.runs()).append('\n');
        // A shard name this file could not hold as one printable line is left out: the next run then
        // starts at the first entry, which costs requests, never a check.
        p.resumeAt().filter(c -> printable(c.text())).ifPresent(c -> out.append(RESUME_AT).append('=').append(c.text())
                .append('\n'));
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }

    public static Progress decode(byte[] bytes) throws UnreadableException {
        if (bytes.length > MAX_BYTES) {
            throw new UnreadableException(bytes.length + " bytes, more than " + MAX_BYTES);
        }
        String text = new String(bytes, StandardCharsets.US_ASCII);
        if (!text.endsWith("\n")) {
            throw new UnreadableException("does not end with a line break (written in part?)");
        }
        String[] lines = text.substring(0, text.length() - 1).split("\n", -1);
        if (!lines[0].equals(HEADER)) {
            throw new UnreadableException("line 1: expected '" + HEADER + "'");
        }
        Long runs = null;
        Optional<Scrub.Cursor> resumeAt = Optional.empty();
        boolean resumeSeen = false;
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            int eq = line.indexOf('=');
            if (eq <= 0 || !printable(line)) {
                throw new UnreadableException("line " + (i + 1) + ": not name=value in printable ASCII");
            }
            String name = line.substring(0, eq);
            String value = line.substring(eq + 1);
            if (name.equals(RUNS) && runs == null) {
                try {
                    runs = Long.parseLong(value);
                } catch (NumberFormatException e) {
                    runs = -1L;
                }
                if (runs < 0 || !value.matches("[0-9]{1,19}")) {
                    throw new UnreadableException("line " + (i + 1) + ": runs must be a decimal count, not '" + value + "'");
                }
            } else if (name.equals(RESUME_AT) && !resumeSeen) {
                resumeSeen = true;
                resumeAt = Scrub.Cursor.parse(value);
                if (resumeAt.isEmpty()) {
                    throw new UnreadableException("line " + (i + 1) + ": resume-at must be SHARD@OFFSET, not '" + value + "'");
                }
            } else {
                throw new UnreadableException("line " + (i + 1) + ": unknown or repeated name '" + name + "'");
            }
        }
        if (runs == null) {
            throw new UnreadableException("no runs line");
        }
        return new Progress(runs, resumeAt);
    }

    /** What the file says; empty when it is absent, or ignored with a warning when it cannot be believed. */
    public Optional<Progress> load() {
        try {
            if (Files.size(file) > MAX_BYTES) {
                LOG.warn("{}: larger than a scrub progress file may be; ignored (the next scrub starts at the first entry)",
                        file);
                return Optional.empty();
            }
            return Optional.of(decode(Files.readAllBytes(file)));
        } catch (NoSuchFileException absent) {
            return Optional.empty();
        } catch (IOException e) {
            LOG.warn("{}: unreadable ({}); ignored (the next scrub starts at the first entry)", file, e.getMessage());
            return Optional.empty();
        } catch (UnreadableException e) {
            LOG.warn("{}: does not decode ({}); ignored (the next scrub starts at the first entry)", file, e.getMessage());
            return Optional.empty();
        }
    }

    /** Writes it whole; a failure is said and otherwise costs only the resume point. */
    public void save(Progress p) {
        try {
            DurableFiles.replace(file, encode(p), DurableFiles.Sync.FULL);
        } catch (IOException e) {
            LOG.warn("could not keep where scrub got to ({}); a restart begins it at the first entry",
                    DurableFiles.naming(file, e).getMessage());
        }
    }

    private static boolean printable(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
    }
}
