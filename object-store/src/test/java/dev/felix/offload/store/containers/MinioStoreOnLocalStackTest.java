package dev.felix.offload.store.containers;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.harness.ContainerServers;
import dev.felix.offload.store.harness.DockerAvailable;
import dev.felix.offload.store.harness.S3Server;
import java.util.Set;
import org.junit.jupiter.api.extension.ExtendWith;

/** The contract on the Minio store against LocalStack in a container, where Docker is available. */
@ExtendWith(DockerAvailable.class)
class MinioStoreOnLocalStackTest extends ObjectStoreContract {
    @Override
    protected ObjectStore openStore() {
        S3Server server = ContainerServers.localstack();
        return dev.felix.offload.store.minio.MinioWire.store(server.settings(server.createBucket("localstack-minio")).build());
    }

    @Override
    protected int expectedPartsOfBigObject() {
        return 8;
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return null; // not verified on this build's machines, which have no Docker engine
    }
}
