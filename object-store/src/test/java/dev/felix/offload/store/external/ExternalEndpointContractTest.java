package dev.felix.offload.store.external;

import dev.felix.offload.store.ObjectStore;
import dev.felix.offload.store.ObjectSummary;
import dev.felix.offload.store.StoreCapability;
import dev.felix.offload.store.StoreUri;
import dev.felix.offload.store.contract.ObjectStoreContract;
import dev.felix.offload.store.remote.Credentials;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The contract against any other S3 endpoint: set {@code FELIX_S3_CONTRACT_URI} to a store URI
 * ({@code s3://bucket/prefix?endpoint=...&region=...&path-style=true}, or {@code minio://...}) and
 * the credentials in {@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY}. The run works
 * under a fresh sub-prefix and deletes what it wrote.
 */
@EnabledIfEnvironmentVariable(named = ExternalEndpointContractTest.VARIABLE, matches = ".+",
        disabledReason = "FELIX_S3_CONTRACT_URI is not set: no external S3 endpoint to run the contract against")
class ExternalEndpointContractTest extends ObjectStoreContract {
    static final String VARIABLE = "FELIX_S3_CONTRACT_URI";

    @Override
    protected ObjectStore openStore() throws Exception {
        StoreUri uri = StoreUri.parse(System.getenv(VARIABLE));
        if (uri.kind() == StoreUri.Kind.FILE) {
            return uri.open();
        }
        var settings = uri.settings().orElseThrow();
        String runPrefix = (settings.prefix().isEmpty() ? "" : settings.prefix() + "/") + "felix-contract-" + UUID.randomUUID();
        var runSettings = settings.toBuilder().prefix(runPrefix).credentials(Credentials.environment())
                .multipart(16L * 1024 * 1024, partSize(), 4).build();
        return uri.kind() == StoreUri.Kind.S3 ? dev.felix.offload.store.s3.AwsSdkWire.store(runSettings)
                : dev.felix.offload.store.minio.MinioWire.store(runSettings);
    }

    @Override
    protected int expectedPartsOfBigObject() {
        return StoreUri.parse(System.getenv(VARIABLE)).kind() == StoreUri.Kind.FILE ? 1 : 8;
    }

    @Override
    protected Set<StoreCapability> expectedCapabilities() {
        return null;
    }

    @AfterAll
    void deleteWhatTheRunWrote() throws Exception {
        if (store == null) {
            return;
        }
        List<String> keys = new ArrayList<>();
        for (ObjectSummary s : store.list("").toList()) {
            keys.add(s.key());
        }
        store.deleteAll(keys);
    }
}
