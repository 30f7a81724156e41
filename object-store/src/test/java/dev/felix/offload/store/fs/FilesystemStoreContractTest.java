package dev.felix.offload.store.fs;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import java.nio.file.Files;
import java.util.EnumSet;
import java.util.Set;

class FilesystemStoreContractTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() throws Exception {
        return FilesystemStore.open(Files.createTempDirectory("felix-fs-store"));
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        // The build machines' file systems (ext4, tmpfs, overlayfs) all have user extended attributes.
        return EnumSet.allOf(StoreCapability.class);
    }
}
