package dev.felix.offload.store.remote;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * Something a client builds on its first request rather than when its store opens (an HTTP client
 * and the SDK clients over it: a second or so of class loading on a cold JVM), built once however
 * many threads ask at once, and not at all after {@link #close()}.
 */
public final class OnFirstUse<T> {
    private final String what;
    private final Supplier<T> build;
    private volatile T value;
    private boolean closed;

    /** @param what what it is, for the error after close */
    public OnFirstUse(String what, Supplier<T> build) {
        this.what = what;
        this.build = build;
    }

    public T get() {
        T v = value;
        if (v == null) {
            synchronized (this) {
                v = value;
                if (v == null) {
                    if (closed) {
                        throw new IllegalStateException(what + " is closed");
                    }
                    v = build.get();
                    value = v;
                }
            }
        }
        return v;
    }

    /** No more building: the value if one was built, for its owner to close. */
    public synchronized Optional<T> close() {
        closed = true;
        return Optional.ofNullable(value);
    }
}
