package dev.felix.offload.store.minio;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.remote.Credentials;
import dev.felix.offload.store.remote.RemoteStoreSettings;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * The MinIO client's connections send each write at once. With Nagle's algorithm on (OkHttp's default) a
 * small upload's last piece waited for the server's delayed acknowledgement: 5,078 segments of 64 KiB took
 * 50 s through {@code minio://} against 13 s through {@code s3://}, the same requests (docs/benchmarks.md).
 */
class MinioWireSocketsTest {

    @Test
    void everyConnectionOfTheClientHasNagleOff() throws Exception {
        MinioWire wire = new MinioWire(RemoteStoreSettings.builder("bucket").endpoint(java.net.URI.create("http://127.0.0.1:9"))
                .credentials(Credentials.ofKeys("a", "b")).build(), "http://127.0.0.1:9");
        javax.net.SocketFactory factory = wire.socketFactory();
        try (Socket unconnected = factory.createSocket()) {
            assertThat(unconnected.getTcpNoDelay()).as("the socket OkHttp connects itself").isTrue();
        }
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             Socket connected = factory.createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort());
             Socket byName = factory.createSocket("127.0.0.1", server.getLocalPort())) {
            assertThat(connected.getTcpNoDelay()).isTrue();
            assertThat(byName.getTcpNoDelay()).isTrue();
        }
    }
}
