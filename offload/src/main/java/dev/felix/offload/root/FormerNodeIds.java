package dev.felix.offload.root;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.DurableFiles;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The node ids a data root offloaded under before {@code felix-offload reidentify} gave it its own,
 * in its {@value #FILE_NAME} file: one id a line, oldest first, UTF-8. Its manifests' entries from
 * then still name keys under those ids, which {@link KeyOwnership} keeps as the shards' history that
 * this root never deletes (the root it was copied from may still need them). Written through
 * {@link DurableFiles}; a line that is not a valid node id is refused, naming the file.
 */
public final class FormerNodeIds {

    public static final String FILE_NAME = "offload.former-node-ids";

    private FormerNodeIds() {
    }

    /** The ids, oldest first; empty when the root was never given a new identity. */
    public static List<String> read(DataRoot root) throws IOException {
        Path file = root.path().resolve(FILE_NAME);
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException absent) {
            return List.of();
        }
        List<String> ids = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            try {
                ids.add(NodeId.validate(line, file.toString()));
            } catch (NodeId.InvalidNodeIdException e) {
                throw new IOException(e.getMessage() + "; the file lists the node ids this root had before "
                        + "`felix-offload reidentify`, one a line");
            }
        }
        return List.copyOf(ids);
    }

    /** Adds {@code id} (durably) unless it is listed already. */
    public static void add(DataRoot root, String id) throws IOException {
        List<String> ids = new ArrayList<>(read(root));
        if (ids.contains(id)) {
            return;
        }
        ids.add(NodeId.validate(id, "the node id"));
        StringBuilder b = new StringBuilder();
        ids.forEach(i -> b.append(i).append('\n'));
        DurableFiles.replace(root.path().resolve(FILE_NAME), b.toString().getBytes(StandardCharsets.UTF_8),
                DurableFiles.Sync.FULL);
    }
}
