package dev.felix.offload.store.minio;

import com.google.common.collect.Multimap;
import io.minio.MinioAsyncClient;
import io.minio.ObjectWriteResponse;
import java.io.RandomAccessFile;
import java.util.concurrent.CompletableFuture;

/**
 * The MinIO client with its single-request PUT opened to a file. {@code PutObjectArgs} takes only an
 * input stream, which the client reads whole into memory before sending (a 128 MiB segment is
 * 128 MiB of heap per upload in flight); given a file positioned at the body, the same request is
 * hashed and sent from the file, as its part uploads already are.
 */
final class FileBodyClient extends MinioAsyncClient {
    FileBodyClient(MinioAsyncClient built) {
        super(built);
    }

    /** One PUT of {@code length} bytes read from {@code file} at its current position. */
    CompletableFuture<ObjectWriteResponse> putFromFile(String bucket, String region, String key, RandomAccessFile file,
            long length, Multimap<String, String> headers) throws Exception {
        return putObjectAsync(bucket, region, key, file, length, headers, null);
    }
}
