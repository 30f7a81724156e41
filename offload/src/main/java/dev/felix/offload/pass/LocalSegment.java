package dev.felix.offload.pass;

import dev.felix.offload.log.SegmentFile;
import dev.felix.offload.log.format.CorruptionException;
import dev.felix.offload.log.format.CorruptionSite;
import dev.felix.offload.log.format.SegmentHeader;
import dev.felix.offload.manifest.Manifest;
import dev.felix.offload.manifest.ManifestEntry;
import dev.felix.offload.manifest.ManifestLookup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;

/** A local segment of a shard and what a pass learned of it before its steps: its header and size. */
record LocalSegment(SegmentFile file, SegmentHeader header, long size) {

    /** Reads {@code f}'s header and size; {@code shard} names it in a corruption's site. */
    static LocalSegment read(SegmentFile f, String shard) throws IOException, CorruptionException {
        ByteBuffer head = ByteBuffer.allocate(SegmentHeader.LENGTH);
        try (FileChannel ch = FileChannel.open(f.log(), StandardOpenOption.READ)) {
            for (int n = 0; n >= 0 && head.hasRemaining(); ) {
                n = ch.read(head); // decode refuses a file shorter than a header as truncated
            }
        }
        SegmentHeader header = SegmentHeader.decode(head.flip(), new CorruptionSite(shard, f.id(), 0));
        return new LocalSegment(f, header, Files.size(f.log()));
    }

    /** Whether {@code manifest} has an entry for this very segment (its id and base offset). */
    boolean hasEntryIn(Manifest manifest) {
        // entries have distinct, ascending base offsets: the one that could be this segment's holds its base
        ManifestLookup found = manifest.find(header.baseOffset());
        ManifestEntry e = found.entry();
        return found.kind() == ManifestLookup.Kind.ENTRY && e.segmentId() == file.id()
                && e.baseOffset() == header.baseOffset();
    }
}
