package dev.felix.offload.retention;

import java.util.List;
import java.util.Map;

/**
 * What the deleted-streams step did.
 *
 * @param directoriesRemoved names of the directories under {@code .deleted/} removed
 * @param objectsDeleted     objects deleted from the store (segments and indexes)
 * @param failures           directories left in place, by name, with why
 */
public record DeletedStreamsReport(List<String> directoriesRemoved, int objectsDeleted, Map<String, String> failures) {

    public DeletedStreamsReport {
        directoriesRemoved = List.copyOf(directoriesRemoved);
        failures = Map.copyOf(failures);
    }

    public static DeletedStreamsReport nothing() {
        return new DeletedStreamsReport(List.of(), 0, Map.of());
    }
}
