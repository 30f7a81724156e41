package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.zip.CRC32;

/**
 * The root's {@value NodeLease#FILE_NAME}: for each node prefix it wrote under, the lease it holds and the
 * one it is taking (pending), if any. Text, one line each ({@code held <epoch> <token> <prefix>},
 * {@code pending <epoch> <token> <prefix>}) after a first line naming the format, and a last line
 * {@code crc32 <8 hex digits>} over every byte before it, so a torn or edited file is told from a
 * sound one. Written through {@link DurableFiles} (temporary, fsync, atomic move, directory fsync).
 */
record LeaseMemory(Map<String, NodeLease.Stamp> held, Map<String, NodeLease.Stamp> pending) {

    private static final String MAGIC = "felix-offload lease 1";

    static LeaseMemory read(DataRoot root) throws IOException {
        Path file = root.path().resolve(NodeLease.FILE_NAME);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException absent) {
            return new LeaseMemory(new TreeMap<>(), new TreeMap<>());
        }
        if (bytes.length > NodeLease.MAX_BYTES) {
            throw damaged(file, bytes.length + " bytes, more than any lease file holds");
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        int crcAt = text.lastIndexOf("crc32 ");
        if (!text.startsWith(MAGIC + "\n") || crcAt < 0 || !text.endsWith("\n")) {
            throw damaged(file, "not a lease file");
        }
        String body = text.substring(0, crcAt);
        CRC32 crc = new CRC32();
        crc.update(body.getBytes(StandardCharsets.UTF_8));
        if (!text.substring(crcAt).equals("crc32 " + String.format("%08x", crc.getValue()) + "\n")) {
            throw damaged(file, "its crc32 line does not match its text");
        }
        Map<String, NodeLease.Stamp> held = new TreeMap<>();
        Map<String, NodeLease.Stamp> pending = new TreeMap<>();
        String[] lines = body.split("\n");
        for (int i = 1; i < lines.length; i++) {
            String[] parts = lines[i].split(" ", 4);
            if (parts.length != 4 || !(parts[0].equals("held") || parts[0].equals("pending"))) {
                throw damaged(file, "line " + (i + 1) + " is not 'held|pending <epoch> <token> <prefix>'");
            }
            NodeLease.Stamp s;
            try {
                s = new NodeLease.Stamp(Long.parseLong(parts[1]), parts[2]);
            } catch (IllegalArgumentException e) {
                throw damaged(file, "line " + (i + 1) + ": " + e.getMessage());
            }
            (parts[0].equals("held") ? held : pending).put(parts[3], s);
        }
        return new LeaseMemory(held, pending);
    }

    private static IOException damaged(Path file, String why) {
        return new IOException(file + ": " + why + "; it is how this root knows its own leases in the store. "
                + "Restore it from a backup of the root, or, if no other copy of this root writes to the store, "
                + "remove it and run once with --take-over-node-id");
    }

    void write(DataRoot root) throws IOException {
        StringBuilder b = new StringBuilder(MAGIC).append('\n');
        held.forEach((prefix, s) -> b.append("held ").append(s.epoch()).append(' ').append(s.token()).append(' ')
                .append(prefix).append('\n'));
        pending.forEach((prefix, s) -> b.append("pending ").append(s.epoch()).append(' ').append(s.token())
                .append(' ').append(prefix).append('\n'));
        CRC32 crc = new CRC32();
        crc.update(b.toString().getBytes(StandardCharsets.UTF_8));
        b.append(String.format("crc32 %08x", crc.getValue())).append('\n');
        DurableFiles.replace(root.path().resolve(NodeLease.FILE_NAME), b.toString().getBytes(StandardCharsets.UTF_8),
                DurableFiles.Sync.FULL);
    }

    LeaseMemory withPending(String prefix, NodeLease.Stamp s) {
        Map<String, NodeLease.Stamp> p = new TreeMap<>(pending);
        p.put(prefix, s);
        return new LeaseMemory(held, p);
    }

    LeaseMemory withHeld(String prefix, NodeLease.Stamp s) {
        Map<String, NodeLease.Stamp> h = new TreeMap<>(held);
        Map<String, NodeLease.Stamp> p = new TreeMap<>(pending);
        h.put(prefix, s);
        p.remove(prefix);
        return new LeaseMemory(h, p);
    }

    LeaseMemory without(String prefix) {
        Map<String, NodeLease.Stamp> h = new TreeMap<>(held);
        Map<String, NodeLease.Stamp> p = new TreeMap<>(pending);
        h.remove(prefix);
        p.remove(prefix);
        return new LeaseMemory(h, p);
    }

    boolean mine(String prefix, NodeLease.Stamp s) {
        return s.equals(held.get(prefix)) || s.equals(pending.get(prefix));
    }
}
