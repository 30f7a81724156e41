package dev.felix.offload.log.side;

import dev.felix.offload.log.format.CorruptionException;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * What loading a derived file ({@code epochs}, {@code producers}, {@code keys.idx}) found. A derived
 * file can be rebuilt from the log, so damage never fails a load: the value is simply not there, and
 * {@link #problem()} keeps the reason for whoever reports it (fsck lists it as a repairable problem).
 *
 * @param <T> the decoded value
 */
public final class DerivedLoad<T> {

    /** The three outcomes of a load. */
    public enum Status {
        /** The file decoded (and, where the caller asked, passed its checks against the log). */
        LOADED,
        /** There is no file. Not a problem: every shard written before the kind existed has none. */
        ABSENT,
        /** The file is there but failed a check; it is ignored and its reason is {@link #problem()}. */
        IGNORED
    }

    private final Status status;
    private final T value;
    private final CorruptionException problem;

    private DerivedLoad(Status status, T value, CorruptionException problem) {
        this.status = status;
        this.value = value;
        this.problem = problem;
    }

    public static <T> DerivedLoad<T> loaded(T value) {
        return new DerivedLoad<>(Status.LOADED, Objects.requireNonNull(value, "value"), null);
    }

    public static <T> DerivedLoad<T> absent() {
        return new DerivedLoad<>(Status.ABSENT, null, null);
    }

    public static <T> DerivedLoad<T> ignored(CorruptionException problem) {
        return new DerivedLoad<>(Status.IGNORED, null, Objects.requireNonNull(problem, "problem"));
    }

    public Status status() {
        return status;
    }

    /** The decoded value; present only when {@link #status()} is {@link Status#LOADED}. */
    public Optional<T> value() {
        return Optional.ofNullable(value);
    }

    /** The value when loaded, else {@code fallback} (the kind's "nothing", for example an empty history). */
    public T orElse(T fallback) {
        return value != null ? value : fallback;
    }

    /** Why the file was ignored; present only when {@link #status()} is {@link Status#IGNORED}. */
    public Optional<CorruptionException> problem() {
        return Optional.ofNullable(problem);
    }

    /**
     * A loaded value that must also pass {@code check} (for example against the log): a value that
     * fails becomes {@link Status#IGNORED} with the check's error; absent and ignored loads are
     * returned as they are.
     */
    public DerivedLoad<T> checked(Check<T> check) {
        if (value == null) {
            return this;
        }
        try {
            check.verify(value);
            return this;
        } catch (CorruptionException e) {
            return ignored(e);
        }
    }

    /** A check a loaded value must pass. */
    @FunctionalInterface
    public interface Check<T> {
        void verify(T value) throws CorruptionException;
    }

    /** The same outcome with the value mapped. */
    public <R> DerivedLoad<R> map(Function<? super T, ? extends R> mapper) {
        return value == null ? new DerivedLoad<>(status, null, problem) : loaded(mapper.apply(value));
    }

    @Override
    public String toString() {
        return switch (status) {
            case LOADED -> "loaded " + value;
            case ABSENT -> "absent";
            case IGNORED -> "ignored: " + problem.getMessage();
        };
    }
}
