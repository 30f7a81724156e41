package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.felix.offload.store.AccessDeniedException;
import dev.felix.offload.store.harness.S3Server;
import dev.felix.offload.store.harness.S3Servers;
import dev.felix.offload.store.minio.MinioWire;
import dev.felix.offload.store.s3.AwsSdkWire;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A store whose client finds no credentials anywhere it looks: each wire (the AWS SDK's, MinIO's) against S3Mock, its
 * credentials taken from an environment that holds none. The request is never sent; the store answers
 * with an access denial saying where credentials are looked for, not with an I/O failure to retry.
 * The decision is taken on the type each wire's provider throws, not on the client library's wording.
 */
class NoCredentialsOnS3MockTest {
    private static final List<String> CREDENTIAL_VARIABLES = List.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY");

    @BeforeAll
    static void environmentHoldsNoCredentials() {
        for (String name : CREDENTIAL_VARIABLES) {
            assumeTrue(System.getenv(name) == null, "the test environment sets " + name + "; this test needs none set");
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"sdk", "minio"})
    void noCredentialsAnywhereIsAnAccessDenialNamingWhereTheyAreLookedFor(String client) {
        S3Server server = S3Servers.s3mock();
        RemoteStoreSettings settings = server.settings(server.createBucket("no-credentials-" + client))
                .credentials(Credentials.environment()).build();
        Function<RemoteStoreSettings, RemoteStore> open = client.equals("sdk") ? AwsSdkWire::store : MinioWire::store;
        try (RemoteStore store = open.apply(settings)) {
            AccessDeniedException denied = catchThrowableOfType(AccessDeniedException.class,
                    () -> store.listPage("", null, 1));
            assertThat(denied).as("the store's answer to a request without credentials").isNotNull();
            assertThat(denied.isRetryable()).isFalse();
            assertThat(denied.getMessage()).isEqualTo("list failed: no credentials found: set AWS_ACCESS_KEY_ID and"
                    + " AWS_SECRET_ACCESS_KEY, or a profile (AWS_PROFILE, ~/.aws/credentials), or run with an instance or"
                    + " container role");
            assertThat(CredentialsUnavailableException.within(denied)).as("the typed cause is kept").isTrue();
        }
    }
}
