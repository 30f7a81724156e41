package dev.felix.offload.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.pattern.ThrowableHandlingConverter;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.CoreConstants;

/**
 * A logged failure's cause, on the line of its message: {@code [TransientStoreException: list failed:
 * Connection refused]}, its causes after it, so that one failure is one line an operator can read
 * and grep. The stack trace follows on lines of its own only where the event's logger is at
 * {@code debug} ({@code log.level: debug}), for whoever is chasing a bug.
 */
public final class OneLineThrowableConverter extends ThrowableHandlingConverter {

    /** Causes named at most, the failure itself included. */
    private static final int MAX_CAUSES = 4;

    private final ThrowableProxyConverter full = new ThrowableProxyConverter();

    @Override
    public void start() {
        full.setContext(getContext());
        full.start();
        super.start();
    }

    @Override
    public String convert(ILoggingEvent event) {
        IThrowableProxy thrown = event.getThrowableProxy();
        if (thrown == null) {
            return "";
        }
        if (getContext() instanceof LoggerContext context && context.getLogger(event.getLoggerName()).isDebugEnabled()) {
            return CoreConstants.LINE_SEPARATOR + full.convert(event).stripTrailing();
        }
        return " [" + summary(thrown) + "]";
    }

    /** {@code Type: message; caused by Type: message}, one line, without package names. */
    static String summary(IThrowableProxy thrown) {
        StringBuilder b = new StringBuilder();
        int n = 0;
        for (IThrowableProxy t = thrown; t != null && n < MAX_CAUSES; t = t.getCause(), n++) {
            if (n > 0) {
                b.append("; caused by ");
            }
            String type = t.getClassName();
            b.append(type.substring(type.lastIndexOf('.') + 1));
            if (t.getMessage() != null) {
                b.append(": ").append(t.getMessage().replace('\n', ' ').replace('\r', ' '));
            }
        }
        return b.toString();
    }
}
