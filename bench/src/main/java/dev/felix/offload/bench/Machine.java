package dev.felix.offload.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the run ran on. */
final class Machine {

    private Machine() {
    }

    static Map<String, String> describe(Path work) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("cores", Runtime.getRuntime().availableProcessors() + " (" + cpuModel() + ")");
        long ram = -1;
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            ram = os.getTotalMemorySize();
        }
        m.put("memory", ram > 0 ? Table.f("%.1f GiB", ram / (double) BenchConfig.GiB) : "unknown");
        m.put("JDK", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + " ("
                + System.getProperty("java.vendor") + ")");
        m.put("OS", osName() + "; " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        try {
            m.put("work directory", work + " on " + Files.getFileStore(Files.createDirectories(work)).type());
        } catch (IOException e) {
            m.put("work directory", work.toString());
        }
        return m;
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return "model unknown";
    }

    private static String osName() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/etc/os-release"));
            for (String line : lines) {
                if (line.startsWith("PRETTY_NAME=")) {
                    return line.substring("PRETTY_NAME=".length()).replace("\"", "");
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return System.getProperty("os.name");
    }
}
