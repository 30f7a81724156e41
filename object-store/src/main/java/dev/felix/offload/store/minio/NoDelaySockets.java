package dev.felix.offload.store.minio;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * Plain sockets with Nagle's algorithm off, for the MinIO client's OkHttp. OkHttp leaves it on, so the
 * last short piece of a request body waits for the server's acknowledgement of the piece before it,
 * which a server delays (tens of milliseconds on Linux): every small upload paid that. The AWS SDK's
 * clients turn it off themselves. TLS is layered over these sockets, so it applies to HTTPS too.
 */
final class NoDelaySockets extends SocketFactory {

    @Override
    public Socket createSocket() throws IOException {
        Socket socket = new Socket();
        socket.setTcpNoDelay(true);
        return socket;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected(new InetSocketAddress(host, port), new InetSocketAddress(localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected(new InetSocketAddress(host, port), null);
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return connected(new InetSocketAddress(address, port), new InetSocketAddress(localAddress, localPort));
    }

    private Socket connected(InetSocketAddress remote, InetSocketAddress local) throws IOException {
        Socket socket = createSocket();
        try {
            if (local != null) {
                socket.bind(local);
            }
            socket.connect(remote);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        return socket;
    }
}
