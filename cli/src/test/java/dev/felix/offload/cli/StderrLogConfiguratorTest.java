package dev.felix.offload.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

@org.junit.jupiter.api.parallel.Isolated("configures the process's logging")
class StderrLogConfiguratorTest {
    @Test
    void logbackFindsItAndSendsWarningsToStderr() {
        // The context slf4j handed out was set up by the configurator named in META-INF/services.
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        assertThat(root.getLevel()).isEqualTo(Level.WARN);
        assertThat(appenders(root)).singleElement().satisfies(a -> {
            assertThat(a.getName()).isEqualTo(StderrLogConfigurator.APPENDER);
            assertThat(a).isInstanceOf(ConsoleAppender.class);
            assertThat(((ConsoleAppender<ILoggingEvent>) a).getTarget()).isEqualTo("System.err");
        });
    }

    @Test
    void anOperatorsOwnFileWins() {
        LoggerContext fresh = new LoggerContext();
        StderrLogConfigurator configurator = new StderrLogConfigurator();
        configurator.setContext(fresh);
        String before = System.getProperty("logback.configurationFile");
        System.setProperty("logback.configurationFile", "/etc/felix/logback.xml");
        try {
            assertThat(configurator.configure(fresh)).isEqualTo(Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY);
        } finally {
            if (before == null) {
                System.clearProperty("logback.configurationFile");
            } else {
                System.setProperty("logback.configurationFile", before);
            }
        }
        assertThat(appenders(fresh.getLogger(Logger.ROOT_LOGGER_NAME))).isEmpty();
    }

    /** What {@code body} writes to standard error through a fresh context set up by the configurator. */
    private static String stderrOf(java.util.function.Consumer<LoggerContext> body) {
        LoggerContext fresh = new LoggerContext();
        fresh.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
        StderrLogConfigurator configurator = new StderrLogConfigurator();
        configurator.setContext(fresh);
        java.io.PrintStream before = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            configurator.configure(fresh);
            body.accept(fresh);
        } finally {
            System.setErr(before);
            fresh.stop();
        }
        return captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Test
    void everyLineIsDatedAndAFailureIsOneLineUnlessTheLoggerIsAtDebug() {
        java.io.IOException failure = new java.io.IOException("list failed: Connection refused",
                new IllegalStateException("pool\nshut down"));
        String warned = stderrOf(context -> context.getLogger("dev.felix.offload.Pass")
                .warn("offload pass failed:\n{}", "shard-7", failure));
        assertThat(warned.lines().toList()).singleElement().satisfies(line -> {
            assertThat(line).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) WARN  .*");
            assertThat(line).endsWith("offload pass failed: shard-7 [IOException: list failed: Connection refused; "
                    + "caused by IllegalStateException: pool shut down]");
        });

        String debugged = stderrOf(context -> {
            Logger logger = context.getLogger("dev.felix.offload.Pass");
            logger.setLevel(Level.DEBUG);
            logger.warn("offload pass failed", failure);
        });
        assertThat(debugged).contains("offload pass failed", "java.io.IOException: list failed", "\tat ",
                "Caused by: java.lang.IllegalStateException");
    }

    private static List<Appender<ILoggingEvent>> appenders(Logger logger) {
        List<Appender<ILoggingEvent>> all = new ArrayList<>();
        logger.iteratorForAppenders().forEachRemaining(all::add);
        return all;
    }
}
