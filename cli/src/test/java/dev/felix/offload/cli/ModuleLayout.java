package dev.felix.offload.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which module's main code may use which: the design's one-way dependencies, checked against what
 * the sources import (and name fully qualified) and what each pom declares. A package belongs to the
 * module whose {@code src/main/java} declares it, so a new package needs no entry here; a new module does.
 */
final class ModuleLayout {

    /** Each library module and the modules its main code may use besides itself. */
    static final Map<String, Set<String>> MAY_USE = Map.of(
            "local-log", Set.of(),
            "object-store", Set.of(),
            "manifest", Set.of("local-log"),
            "offload", Set.of("local-log", "manifest", "object-store"),
            "retention", Set.of("local-log", "manifest", "object-store", "offload"),
            "daemon", Set.of("local-log", "manifest", "object-store", "offload", "retention"),
            "cli", Set.of("local-log", "manifest", "object-store", "offload", "retention", "daemon"));

    /**
     * Packages that certain others may not use, within what their modules allow: the offload pass is
     * one user of the copy lifecycle ({@code copy}), not its home, so neither the lifecycle, the keys
     * and claims of {@code root}, nor retention, scrub or schedule take anything from it.
     */
    static final Map<String, Set<String>> PACKAGE_NOT_USED_BY = Map.of(
            "dev.felix.offload.pass", Set.of("dev.felix.offload.copy", "dev.felix.offload.root",
                    "dev.felix.offload.retention", "dev.felix.offload.scrub", "dev.felix.offload.schedule"));

    private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);
    private static final Pattern NAMED = Pattern.compile("\\b(dev\\.felix\\.offload(?:\\.[a-z]\\w*)+)\\.[A-Z]");
    private static final Pattern COMMENTS = Pattern.compile("/\\*.*?\\*/|//[^\\n]*", Pattern.DOTALL);
    private static final Pattern POM_DEPENDENCY = Pattern.compile(
            "<dependency>\\s*<groupId>dev\\.felix\\.offload</groupId>\\s*<artifactId>([\\w-]+)</artifactId>(.*?)</dependency>",
            Pattern.DOTALL);

    private ModuleLayout() {
    }

    /** Every use of a package or module the rules do not allow, one line each; empty when the layout holds. */
    static List<String> violations(Path repo) {
        Map<String, String> moduleOf = packageOwners(repo);
        List<String> found = new ArrayList<>();
        for (String module : new TreeSet<>(MAY_USE.keySet())) {
            Set<String> allowed = new TreeSet<>(MAY_USE.get(module));
            allowed.add(module);
            for (Path file : javaFiles(repo.resolve(module).resolve("src/main/java"))) {
                String code = COMMENTS.matcher(read(file)).replaceAll(" ");
                Matcher declared = PACKAGE.matcher(code);
                String own = declared.find() ? declared.group(1) : "";
                Matcher m = NAMED.matcher(code);
                Set<String> reported = new TreeSet<>();
                while (m.find()) {
                    String owner = ownerOf(m.group(1), moduleOf);
                    if (owner != null && !allowed.contains(owner) && reported.add(m.group(1))) {
                        found.add(repo.relativize(file) + ": uses " + m.group(1) + " of module " + owner);
                    }
                    for (Map.Entry<String, Set<String>> rule : PACKAGE_NOT_USED_BY.entrySet()) {
                        String used = rule.getKey();
                        boolean inUsed = m.group(1).equals(used) || m.group(1).startsWith(used + ".");
                        if (inUsed && rule.getValue().contains(own) && reported.add(m.group(1))) {
                            found.add(repo.relativize(file) + ": uses " + m.group(1) + ", which package " + own
                                    + " may not");
                        }
                    }
                }
            }
            Path pom = repo.resolve(module).resolve("pom.xml");
            if (Files.exists(pom)) {
                Matcher d = POM_DEPENDENCY.matcher(read(pom));
                while (d.find()) {
                    boolean testOnly = d.group(2).contains("<scope>test</scope>");
                    if (!testOnly && !allowed.contains(d.group(1))) {
                        found.add(module + "/pom.xml: depends on module " + d.group(1));
                    }
                }
            }
        }
        return found;
    }

    /**
     * Package to module, from the package declarations of every module's sources. A package only
     * tests declare belongs to "{@code <module> tests}", which no main code may use.
     */
    static Map<String, String> packageOwners(Path repo) {
        Map<String, String> owners = new TreeMap<>();
        try (Stream<Path> listing = Files.list(repo)) {
            List<Path> modules = listing.filter(p -> Files.isDirectory(p.resolve("src"))).sorted().toList();
            for (String tree : List.of("src/main/java", "src/test/java")) {
                for (Path module : modules) {
                    String owner = module.getFileName() + (tree.startsWith("src/test") ? " tests" : "");
                    for (Path file : javaFiles(module.resolve(tree))) {
                        Matcher m = PACKAGE.matcher(read(file));
                        if (m.find()) {
                            owners.putIfAbsent(m.group(1), owner);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return owners;
    }

    /** The module of {@code name} (a package, or a class's outer package path), or null when no module declares it. */
    private static String ownerOf(String name, Map<String, String> moduleOf) {
        for (String p = name; p.contains("."); p = p.substring(0, p.lastIndexOf('.'))) {
            String owner = moduleOf.get(p);
            if (owner != null) {
                return owner;
            }
        }
        return null;
    }

    private static List<Path> javaFiles(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
