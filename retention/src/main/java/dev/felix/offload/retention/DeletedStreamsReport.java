package dev.felix.offload.retention;

import java.util.List;
import java.util.Map;

/**
 * What the deleted-streams step did.
 *
 * @param directoriesFinished names of the directories under {@code .deleted/} whose remote copies were
 *                            deleted and recorded as done in this run (the broker removes them)
 * @param objectsDeleted      objects deleted from the store (segments and indexes)
 * @param failures            directories not finished, by name, with why
 * @param objectsKept         objects their manifests named that were not theirs to delete (outside their
 *                            prefix, or named by a live shard) and stay in the store
 */
public record DeletedStreamsReport(List<String> directoriesFinished, int objectsDeleted, Map<String, String> failures,
                                   int objectsKept) {

    public DeletedStreamsReport {
        directoriesFinished = List.copyOf(directoriesFinished);
        failures = Map.copyOf(failures);
    }

    public DeletedStreamsReport(List<String> directoriesFinished, int objectsDeleted, Map<String, String> failures) {
        this(directoriesFinished, objectsDeleted, failures, 0);
    }

    public static DeletedStreamsReport nothing() {
        return new DeletedStreamsReport(List.of(), 0, Map.of(), 0);
    }
}
