package dev.felix.offload.store.harness;

import java.net.URI;
import org.testcontainers.containers.MinIOContainer;
import org.testcontainers.localstack.LocalStackContainer;

/**
 * MinIO and LocalStack in containers (pinned images), each started once per test JVM on first use
 * and stopped at JVM exit (Testcontainers' reaper removes them even after a crash). Only for test
 * classes guarded by {@link DockerAvailable}.
 */
public final class ContainerServers {
    public static final String MINIO_IMAGE = "minio/minio:RELEASE.2025-04-22T22-12-26Z";
    public static final String LOCALSTACK_IMAGE = "localstack/localstack:4.4.0";

    private static S3Server minio;
    private static S3Server localstack;

    private ContainerServers() {}

    public static synchronized S3Server minio() {
        if (minio == null) {
            MinIOContainer container = new MinIOContainer(MINIO_IMAGE);
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-minio-container"));
            minio = new S3Server("MinIO " + MINIO_IMAGE, URI.create(container.getS3URL()), container.getUserName(),
                    container.getPassword(), "us-east-1");
        }
        return minio;
    }

    public static synchronized S3Server localstack() {
        if (localstack == null) {
            LocalStackContainer container = new LocalStackContainer(LOCALSTACK_IMAGE).withServices("s3");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-localstack-container"));
            localstack = new S3Server("LocalStack " + LOCALSTACK_IMAGE, container.getEndpoint(), container.getAccessKey(),
                    container.getSecretKey(), container.getRegion());
        }
        return localstack;
    }
}
