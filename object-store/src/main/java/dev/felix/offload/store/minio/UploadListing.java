package dev.felix.offload.store.minio;

import com.google.common.collect.Multimap;
import io.minio.MinioAsyncClient;
import io.minio.Xml;
import io.minio.http.Method;
import io.minio.messages.ListMultipartUploadsResult;
import okhttp3.Response;
import okhttp3.ResponseBody;

/**
 * The MinIO client with one request its public API cannot make: a ListMultipartUploads carrying
 * only the prefix and, past the first page, the markers. {@code listMultipartUploadsAsync} always
 * adds {@code delimiter} and {@code max-uploads}, and S3Proxy 2.7.0 answers 501 Not Implemented to
 * a listing with either. S3 lists at most 1000 uploads a page without {@code max-uploads} anyway.
 * Built on the client's own (protected) request path, so signing, endpoint and error answers are
 * handled as for every other call.
 */
final class UploadListing extends MinioAsyncClient {
    UploadListing(MinioAsyncClient client) {
        super(client);
    }

    /** One page of the uploads under {@code prefix}; markers null for the first page. */
    ListMultipartUploadsResult page(String bucket, String region, String prefix, String keyMarker, String uploadIdMarker)
            throws Exception {
        Multimap<String, String> query = newMultimap("uploads", "", "prefix", prefix);
        if (keyMarker != null) {
            query.put("key-marker", keyMarker);
        }
        if (uploadIdMarker != null) {
            query.put("upload-id-marker", uploadIdMarker);
        }
        try (Response response = execute(Method.GET, bucket, null, region, null, query, null, 0)) {
            ResponseBody body = response.body();
            if (body == null) {
                throw new java.io.IOException("ListMultipartUploads answered without a body");
            }
            return Xml.unmarshal(ListMultipartUploadsResult.class, body.charStream());
        }
    }
}
