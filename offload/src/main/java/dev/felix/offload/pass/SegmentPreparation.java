package dev.felix.offload.pass;

import dev.felix.offload.log.format.ScanDepth;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.RecordHeader;
import dev.felix.offload.log.format.SegmentIndex;
import dev.felix.offload.log.format.SegmentScan;
import dev.felix.offload.log.format.SegmentScanner;
import dev.felix.offload.store.BodyDigests;
import dev.felix.offload.store.DigestPlan;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.CRC32;

/**
 * Everything an upload needs from a sealed segment, from one read of its bytes: the record checks
 * and what they found ({@link SegmentScan}, the CRC32 of the valid bytes among it), the sparse
 * index (built as the records go by, with the writer's spacing rule), and the digests the store
 * would otherwise read the body for (part CRC32s in the slices the store asks for, and MD5s where
 * it sends them).
 *
 * <p>The digests come from the bytes as the scanner reads them: a channel between the scanner and
 * the file hands each byte read for the first time to the digests, in file order. They are
 * offered only when that covered exactly the valid bytes, in order (a clean scan).
 */
final class SegmentPreparation {

    /**
     * What one read of a segment gave.
     *
     * @param digests   null where the store takes none, or the scan was not clean
     * @param bytesRead bytes read from the file, each counted as often as it was read
     */
    record Prepared(SegmentScan scan, SegmentIndex index, BodyDigests digests, long bytesRead) {
    }

    private SegmentPreparation() {
    }

    /**
     * Reads {@code file} once.
     *
     * @param spacingBytes the index spacing: an entry for the first record, then one each so many bytes
     * @param plan         the digests to take (see {@link dev.felix.offload.store.ObjectUploader#digestPlan}),
     *                     empty for none
     */
    static Prepared read(Path file, String shard, long segmentId, int spacingBytes, Optional<DigestPlan> plan)
            throws IOException {
        DigestingChannel channel = new DigestingChannel(FileChannel.open(file, StandardOpenOption.READ), plan);
        SegmentScanner scanner;
        try {
            scanner = SegmentScanner.open(channel, shard, segmentId, ScanDepth.RECORDS);
        } catch (CorruptionException e) {
            long size = Files.size(file);
            return new Prepared(new SegmentScan(null, size, 0, 0, 0, -1, -1, e, -1, -1), null, null, channel.bytesRead);
        }
        try (scanner) {
            SegmentScan.Timestamps timestamps = new SegmentScan.Timestamps();
            long[] offsets = new long[16];
            long[] positions = new long[16];
            int entries = 0;
            long lastIndexed = -1;
            CorruptionException failure = null;
            try {
                while (true) {
                    long position = scanner.position();
                    RecordHeader r = scanner.nextChecked();
                    if (r == null) {
                        break;
                    }
                    if (lastIndexed < 0 || position - lastIndexed >= spacingBytes) {
                        if (entries == offsets.length) {
                            offsets = Arrays.copyOf(offsets, entries * 2);
                            positions = Arrays.copyOf(positions, entries * 2);
                        }
                        offsets[entries] = r.offset();
                        positions[entries] = position;
                        entries++;
                        lastIndexed = position;
                    }
                    timestamps.seen(r.timestampMicros(), scanner.recordCount());
                }
            } catch (CorruptionException e) {
                failure = e;
            }
            SegmentScan scan = timestamps.scanOf(scanner, failure, scanner.validBytesCrc32());
            SegmentIndex index = failure == null ? SegmentIndex.of(scanner.header().baseOffset(),
                    Arrays.copyOf(offsets, entries), Arrays.copyOf(positions, entries)) : null;
            BodyDigests digests = scan.isClean() ? channel.digests(scan.validEnd()) : null;
            if (digests != null && digests.crc32() != scan.validBytesCrc32()) {
                digests = null; // not the bytes the records were checked in: let the store take its own
            }
            return new Prepared(scan, index, digests, channel.bytesRead);
        }
    }

    /**
     * A read-only channel that counts the bytes read and digests each byte the first time it is
     * read, as long as reads go forward without gaps (the scanner re-reads the start of a record
     * that straddled its window, and never skips ahead when it reads whole records).
     */
    static final class DigestingChannel extends FileChannel {
        private final FileChannel file;
        private final long partSize;
        private final boolean digesting;
        private final CRC32 whole = new CRC32();
        private final CRC32 part = new CRC32();
        /** Null where the store sends no MD5: a fifth of the pass's CPU spared. */
        private final MessageDigest md5;
        private long[] partCrcs = new long[4];
        private byte[][] partMd5s = new byte[4][];
        private int parts;
        private long partFill;
        /** Bytes [0, fed) went into the digests; -1 once a gap made them worthless. */
        private long fed;
        long bytesRead;

        DigestingChannel(FileChannel file, Optional<DigestPlan> plan) {
            this.file = file;
            this.digesting = plan.isPresent();
            this.partSize = plan.map(DigestPlan::partSize).orElse(Long.MAX_VALUE);
            this.md5 = plan.filter(DigestPlan::md5s).map(p -> BodyDigests.md5()).orElse(null);
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            int start = dst.position();
            int n = file.read(dst, position);
            if (n > 0) {
                bytesRead += n;
                if (digesting && fed >= 0) {
                    if (position > fed) {
                        fed = -1;
                    } else if (position + n > fed) {
                        ByteBuffer fresh = dst.duplicate();
                        fresh.limit(start + n).position(start + (int) (fed - position));
                        feed(fresh);
                    }
                }
            }
            return n;
        }

        private void feed(ByteBuffer bytes) {
            while (bytes.hasRemaining()) {
                int take = (int) Math.min(bytes.remaining(), partSize - partFill);
                ByteBuffer slice = bytes.slice(bytes.position(), take);
                whole.update(slice.duplicate());
                part.update(slice.duplicate());
                if (md5 != null) {
                    md5.update(slice);
                }
                bytes.position(bytes.position() + take);
                partFill += take;
                fed += take;
                if (partFill == partSize) {
                    closePart();
                }
            }
        }

        private void closePart() {
            if (parts == partCrcs.length) {
                partCrcs = Arrays.copyOf(partCrcs, parts * 2);
                partMd5s = Arrays.copyOf(partMd5s, parts * 2);
            }
            partCrcs[parts] = part.getValue();
            if (md5 != null) {
                partMd5s[parts] = md5.digest();
            }
            parts++;
            part.reset();
            partFill = 0;
        }

        /** The digests of bytes [0, length), or null unless exactly those were fed. */
        BodyDigests digests(long length) {
            if (!digesting || fed != length) {
                return null;
            }
            if (partFill > 0 || parts == 0) {
                closePart();
            }
            return new BodyDigests(length, partSize, whole.getValue(), Arrays.copyOf(partCrcs, parts),
                    md5 == null ? null : Arrays.copyOf(partMd5s, parts));
        }

        @Override
        public long size() throws IOException {
            return file.size();
        }

        @Override
        protected void implCloseChannel() throws IOException {
            file.close();
        }

        @Override
        public int read(ByteBuffer dst) {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public int write(ByteBuffer src) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public int write(ByteBuffer src, long position) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public long position() {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public FileChannel position(long newPosition) {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public FileChannel truncate(long size) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public void force(boolean metaData) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) {
            throw new UnsupportedOperationException("positional reads only");
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) {
            throw new UnsupportedOperationException("no locks");
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) {
            throw new UnsupportedOperationException("no locks");
        }
    }
}
