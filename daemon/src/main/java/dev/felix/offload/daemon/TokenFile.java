package dev.felix.offload.daemon;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The bearer tokens of {@code http.auth.token-file}: one a line (blank lines and lines starting with
 * {@code #} are skipped), each at least {@value #MIN_LENGTH} characters. Two lines let an operator
 * rotate without a gap: add the new token, move the clients, remove the old one.
 *
 * <p>The file is looked at on every request (one {@code stat}, following links, so a Kubernetes Secret
 * volume's swapped {@code ..data} link counts as a change) and read again when its modification time,
 * size or identity changed. A file that is gone, unreadable or holds no usable token admits nobody
 * until it is fixed: failing closed is the only safe reading of a token file mid-change.
 *
 * <p>Only SHA-256 digests of the tokens are kept, and a presented token is compared by its digest with
 * {@link MessageDigest#isEqual} against every one of them, so neither the time taken nor an early exit
 * tells a client how much of a token, or its length, it got right.
 */
final class TokenFile {

    private static final Logger LOG = LoggerFactory.getLogger(TokenFile.class);
    static final int MIN_LENGTH = 16;
    /** A token file is a few lines; the bound keeps a wrong path from being read whole. */
    private static final int MAX_BYTES = 64 * 1024;

    private record Stamp(FileTime modified, long size, Object key) {
    }

    private record Tokens(Stamp stamp, List<byte[]> digests) {
    }

    private final Path file;
    private volatile Tokens tokens;

    private TokenFile(Path file, Tokens tokens) {
        this.file = file;
        this.tokens = tokens;
    }

    /** Reads the file at start-up; a file without a usable token refuses the start, naming the setting. */
    static TokenFile open(Path file) {
        try {
            Stamp stamp = stamp(file);
            List<byte[]> digests = read(file);
            if (digests.isEmpty()) {
                throw new StartRefusedException(HttpSecurity.TOKEN_FILE + ": " + file
                        + " holds no token (one a line, at least " + MIN_LENGTH + " characters)");
            }
            LOG.info("{}: {} token(s) from {}", HttpSecurity.TOKEN_FILE, digests.size(), file);
            warnIfOthersMayRead(HttpSecurity.TOKEN_FILE, file);
            return new TokenFile(file, new Tokens(stamp, digests));
        } catch (IOException e) {
            throw new StartRefusedException(HttpSecurity.TOKEN_FILE + ": cannot read " + file + " ("
                    + dev.felix.offload.log.IoProblem.describe(e) + ")");
        }
    }

    /** Whether {@code presented} is one of the file's tokens as it is now. */
    boolean accepts(String presented) {
        byte[] digest = sha256(presented.getBytes(StandardCharsets.UTF_8));
        boolean match = false;
        for (byte[] d : current().digests()) {
            match |= MessageDigest.isEqual(d, digest);
        }
        return match;
    }

    private Tokens current() {
        Tokens seen = tokens;
        Stamp now;
        try {
            now = stamp(file);
        } catch (IOException e) {
            if (seen.stamp() != null) {
                LOG.warn("{}: {} cannot be read ({}); no token is accepted until it can", HttpSecurity.TOKEN_FILE, file,
                        dev.felix.offload.log.IoProblem.describe(e));
                tokens = new Tokens(null, List.of());
            }
            return tokens;
        }
        if (now.equals(seen.stamp())) {
            return seen;
        }
        synchronized (this) {
            if (!now.equals(tokens.stamp())) {
                List<byte[]> digests;
                try {
                    digests = read(file);
                } catch (IOException e) {
                    LOG.warn("{}: {} cannot be read ({}); no token is accepted until it can", HttpSecurity.TOKEN_FILE,
                            file, dev.felix.offload.log.IoProblem.describe(e));
                    digests = List.of();
                }
                if (digests.isEmpty()) {
                    LOG.warn("{}: {} changed and holds no token now; no token is accepted until it does",
                            HttpSecurity.TOKEN_FILE, file);
                } else {
                    LOG.info("{}: {} changed; {} token(s) accepted from now on", HttpSecurity.TOKEN_FILE, file,
                            digests.size());
                }
                tokens = new Tokens(now, digests);
            }
            return tokens;
        }
    }

    /** A secret any user of the machine may read is no secret: said once, at start-up. */
    static void warnIfOthersMayRead(String setting, Path file) {
        try {
            if (Files.getPosixFilePermissions(file).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
                LOG.warn("{}: {} may be read by any user of this machine; chmod o-r it", setting, file);
            }
        } catch (IOException | UnsupportedOperationException e) {
            // not a POSIX file system, or gone: nothing to say here
        }
    }

    private static Stamp stamp(Path file) throws IOException {
        BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
        return new Stamp(a.lastModifiedTime(), a.size(), Objects.requireNonNullElse(a.fileKey(), file.toRealPath()));
    }

    private static List<byte[]> read(Path file) throws IOException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw new IOException("larger than " + MAX_BYTES / 1024 + " KiB; is it the token file?");
        }
        List<byte[]> digests = new ArrayList<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\r?\n")) {
            String token = line.strip();
            if (token.isEmpty() || token.startsWith("#")) {
                continue;
            }
            if (token.length() < MIN_LENGTH) {
                LOG.warn("{}: a token in {} is shorter than {} characters; it is not accepted", HttpSecurity.TOKEN_FILE,
                        file, MIN_LENGTH);
                continue;
            }
            digests.add(sha256(token.getBytes(StandardCharsets.UTF_8)));
        }
        return digests;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
