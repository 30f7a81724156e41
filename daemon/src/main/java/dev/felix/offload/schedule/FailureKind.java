package dev.felix.offload.schedule;

import java.util.Locale;

/**
 * The label a failure is counted and reported under: its exception type in snake case without the
 * {@code Exception} suffix ({@code ThrottledException} is {@code throttled}, {@code ObjectNotFoundException}
 * {@code object_not_found}). Metrics, /health and scrub's problems use the same words, so an operator can
 * match one against another; it lives here, below the daemon and scrub, so neither has to import the other.
 */
public final class FailureKind {

    private FailureKind() {
    }

    public static String of(Throwable error) {
        return of(error.getClass());
    }

    public static String of(Class<? extends Throwable> type) {
        String name = type.getSimpleName().replaceAll("Exception$", "");
        return name.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
    }
}
