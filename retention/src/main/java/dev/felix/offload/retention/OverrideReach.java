package dev.felix.offload.retention;

import dev.felix.offload.log.DataRoot;
import dev.felix.offload.log.side.StreamMarker;
import dev.felix.offload.log.side.StreamMarkerFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Which retention overrides reach no shard of a data root. An override naming a stream or a shard
 * directory the root does not hold is not an error (the stream may be created later), but it takes
 * effect nowhere, so it is said out loud: at the daemon's start-up and at every retention pass, never
 * silently ignored. A name the root could not read is matched by its name (it is reported on its own).
 */
public final class OverrideReach {

    private static final Logger LOG = LoggerFactory.getLogger(OverrideReach.class);

    private OverrideReach() {
    }

    /** The overrides of {@code rules} that apply to no stream shard of {@code root} as it is now. */
    public static List<String> unmatched(RetentionRules rules, DataRoot root) throws IOException {
        List<StreamMarker> markers;
        try {
            // each marker on its own, as the pass reads them: a damaged one costs only its own stream its name
            markers = StreamMarkerFile.loadEach(root.path()).markers();
        } catch (IOException e) {
            markers = List.of(); // patterns then match by rendered names, as the pass does without markers
        }
        return unmatched(rules, root.list(), markers);
    }

    /** As above, over a listing and the stream markers already read. */
    public static List<String> unmatched(RetentionRules rules, DataRoot.Listing listing, Collection<StreamMarker> markers) {
        List<ShardName> names = new ArrayList<>();
        for (DataRoot.Shard s : listing.streamShards()) {
            names.add(ShardName.of(s.name()).withStreamFrom(markers));
        }
        for (DataRoot.Unreadable u : listing.unreadable()) {
            names.add(ShardName.of(u.name()));
        }
        return rules.unmatched(names);
    }

    /** Logs one warning per override that reaches no shard; answers them. */
    public static List<String> warn(RetentionRules rules, DataRoot root, Collection<StreamMarker> markers)
            throws IOException {
        List<String> idle = unmatched(rules, root.list(), markers);
        for (String override : idle) {
            LOG.warn("{}", describe(override, root));
        }
        return idle;
    }

    /** The warning for one override that reaches no shard. */
    public static String describe(String override, DataRoot root) {
        return override + " matches no shard under " + root.path() + ": its limits apply to nothing (a misspelt "
                + (override.startsWith("retention.shards.") ? "directory name" : "stream name") + ", or a stream not "
                + "created yet; see docs/configuration.md)";
    }
}
