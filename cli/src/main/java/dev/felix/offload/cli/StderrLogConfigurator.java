package dev.felix.offload.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The tool's logging: warnings and worse to stderr, since stdout carries output other programs
 * parse. Set up in code rather than from a {@code logback.xml}: reading the XML loaded some 370
 * classes (the XML parser, logback's Joran and model layers) and took about a tenth of a second of
 * every command's start, before anything was logged. An operator's own file given with
 * {@code -Dlogback.configurationFile} still wins: this configurator then steps aside for logback's.
 * Found by logback through {@code META-INF/services}; the daemon sets its levels on top.
 *
 * <p>Every line starts with an ISO-8601 timestamp with its offset from UTC, and says what happened
 * on that one line: a logged failure's type and message follow its message in brackets, line breaks
 * in messages become spaces, and a stack trace follows only where the logger is at debug
 * ({@link OneLineThrowableConverter}).
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class StderrLogConfigurator extends ContextAwareBase implements Configurator {
    static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{36} - "
            + "%replace(%msg){'[\\r\\n]+', ' '}%oneLineEx%n";
    static final String APPENDER = "STDERR";

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (System.getProperty("logback.configurationFile") != null) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout(context));
        encoder.start();
        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName(APPENDER);
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.addAppender(stderr);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /** A log line as the tool writes it, started. */
    static PatternLayout layout(LoggerContext context) {
        PatternLayout layout = new PatternLayout();
        layout.setContext(context);
        layout.getInstanceConverterMap().put("oneLineEx", OneLineThrowableConverter::new);
        layout.setPattern(PATTERN);
        layout.start();
        return layout;
    }
}
