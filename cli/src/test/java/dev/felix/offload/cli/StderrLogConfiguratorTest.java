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

    private static List<Appender<ILoggingEvent>> appenders(Logger logger) {
        List<Appender<ILoggingEvent>> all = new ArrayList<>();
        logger.iteratorForAppenders().forEachRemaining(all::add);
        return all;
    }
}
