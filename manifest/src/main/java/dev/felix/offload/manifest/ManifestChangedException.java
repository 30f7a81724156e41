package dev.felix.offload.manifest;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The shard's {@code offload.manifest} is no longer the file a {@link ManifestStore} loaded: another
 * process (the broker, truncating or resetting the shard's log) replaced it. Nothing was written;
 * whatever the caller held of the old manifest is stale and must be dropped, and the shard taken up
 * again from {@link ManifestStore#reload()}.
 */
public final class ManifestChangedException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String shard;
    private final transient Path file;

    /** @param what when or how it changed, for the message */
    public ManifestChangedException(String shard, Path file, String what) {
        super(shard + ": " + file.getFileName() + " was changed by another process " + what
                + "; nothing was written");
        this.shard = shard;
        this.file = file;
    }

    /** The shard, as its manifest store names it. */
    public String shard() {
        return shard;
    }

    /** The manifest file that changed. */
    public Path file() {
        return file;
    }
}
