package dev.felix.offload.retention;

import dev.felix.offload.log.ShardKey;
import dev.felix.offload.log.side.StreamMarker;

import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a shard directory's name says about its shard, for matching retention overrides.
 *
 * <p>A directory written for a {@link ShardKey} is named
 * {@code <tenant>_<namespace>_<stream>_<shard>-<hash>[-<incarnation>]}, where the names are rendered
 * lossily (characters outside {@code [A-Za-z0-9-]} become {@code _}, long names are cut) and the
 * hash makes the name unique. So a name alone gives the shard number, the incarnation and the
 * rendered names, and it can be checked against exact names ({@link #isNameOf}), but the exact names
 * cannot be read back from it. They are known when a {@code .streams/} marker of the root names a
 * stream whose shard directory this is ({@link #withStreamFrom}).
 *
 * <p>A directory whose name does not have that form (a test's {@code shard-a}) is only matched by
 * shard-directory overrides.
 */
public final class ShardName {

    private static final Pattern FORM =
            Pattern.compile("(?<rendered>.*)_(?<shard>[0-9]{1,10})-(?<hash>[0-9a-f]{16})(?:-(?<inc>[0-9a-f]{16}))?");

    private final String directory;
    private final String rendered;
    private final int shard;
    private final long incarnation;
    private final StreamId stream;

    private ShardName(String directory, String rendered, int shard, long incarnation, StreamId stream) {
        this.directory = directory;
        this.rendered = rendered;
        this.shard = shard;
        this.incarnation = incarnation;
        this.stream = stream;
    }

    /**
     * The name of the shard {@code directory}: a directory's file name, or a shard's name under the
     * root ({@code dead-letters/<dir>}), whose last part is the directory's name.
     */
    public static ShardName of(String directory) {
        Objects.requireNonNull(directory, "directory");
        Matcher m = FORM.matcher(fileName(directory));
        if (!m.matches()) {
            return new ShardName(directory, null, 0, 0, null);
        }
        long shard = Long.parseLong(m.group("shard"));
        if (shard > 0xFFFF_FFFFL) {
            return new ShardName(directory, null, 0, 0, null);
        }
        String inc = m.group("inc");
        return new ShardName(directory, m.group("rendered"), (int) shard,
                inc == null ? 0 : Long.parseUnsignedLong(inc, 16), null);
    }

    /**
     * This name with the exact stream names taken from the first marker whose stream this directory
     * belongs to (checked by the hash); unchanged when none does.
     */
    public ShardName withStreamFrom(Collection<StreamMarker> markers) {
        if (rendered == null) {
            return this;
        }
        for (StreamMarker marker : markers) {
            StreamId id = new StreamId(marker.tenant(), marker.namespace(), marker.stream());
            if (isNameOf(id)) {
                return new ShardName(directory, rendered, shard, incarnation, id);
            }
        }
        return this;
    }

    /**
     * True when this directory is a shard of stream {@code id}: the name a {@link ShardKey} of these
     * names, this shard number and this incarnation is given equals this one.
     */
    public boolean isNameOf(StreamId id) {
        if (rendered == null) {
            return false;
        }
        return new ShardKey(id.tenant(), id.namespace(), id.stream(), shard, incarnation).directoryName()
                .equals(fileName(directory));
    }

    private static String fileName(String name) {
        return name.substring(name.lastIndexOf('/') + 1);
    }

    /** The shard's name as given: a directory's file name, or its path under the root. */
    public String directory() {
        return directory;
    }

    /** The rendered {@code <tenant>_<namespace>_<stream>} part, when the name has the shard form. */
    public Optional<String> rendered() {
        return Optional.ofNullable(rendered);
    }

    /** The shard number (unsigned 32 bits), when the name has the shard form. */
    public OptionalInt shard() {
        return rendered == null ? OptionalInt.empty() : OptionalInt.of(shard);
    }

    /** The incarnation (0 for none), when the name has the shard form. */
    public OptionalLong incarnation() {
        return rendered == null ? OptionalLong.empty() : OptionalLong.of(incarnation);
    }

    /** The exact stream names, when a marker gave them. */
    public Optional<StreamId> stream() {
        return Optional.ofNullable(stream);
    }

    @Override
    public String toString() {
        return directory + (stream == null ? "" : " (" + stream + ")");
    }
}
