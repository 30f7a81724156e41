package dev.felix.offload.retention;

import java.util.Objects;

/**
 * The exact names of a stream.
 *
 * @param tenant    the tenant
 * @param namespace the namespace
 * @param stream    the stream's name
 */
public record StreamId(String tenant, String namespace, String stream) {

    public StreamId {
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(stream, "stream");
    }

    @Override
    public String toString() {
        return tenant + "/" + namespace + "/" + stream;
    }
}
