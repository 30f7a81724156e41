package dev.felix.offload.store.fs;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.io.TempDir;

class FilesystemStoreContractTest extends ObjectStoreContract {
    @TempDir
    static Path storeRoot;

    @Override
    protected ObjectStore openStore() throws Exception {
        return FilesystemStore.open(storeRoot.resolve("root"));
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        // The build machines' file systems (ext4, tmpfs, overlayfs) all have user extended attributes.
        // its CRC32 is an attribute this process wrote, not a server's: scrub must not take it for the bytes
        // and it proves its copies itself, so it neither takes Content-MD5 nor answers MD5 ETags
        return EnumSet.complementOf(EnumSet.of(StoreCapability.CRC32_KEPT_BY_SERVER,
                StoreCapability.CONTENT_MD5_VERIFIED_ON_PUT, StoreCapability.MD5_ETAG));
    }

    @Override
    protected Boolean storesCrc32OfBigObject() {
        return true; // the filesystem store keeps every object's CRC32
    }
}
