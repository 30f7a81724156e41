package dev.felix.offload.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Reads a configuration file into flat dotted keys, whatever its syntax:
 * <ul>
 *   <li>{@code .yaml} / {@code .yml}: nested mappings are joined with dots, so
 *       {@code offload: {verify: auto}} and {@code offload.verify: auto} are the same key;</li>
 *   <li>{@code .properties}: the keys as written.</li>
 * </ul>
 * A key given twice (also once nested and once dotted), a list, or a key without a value is an
 * error naming the key. What the keys mean is {@link DaemonConfig}'s business.
 */
final class ConfigFile {

    private ConfigFile() {
    }

    /** The file's keys and values (trimmed), in file order. */
    static Map<String, String> read(Path file) throws IOException, ConfigException {
        String name = file.getFileName() == null ? file.toString() : file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no configuration file");
        }
        if (name.endsWith(".yaml") || name.endsWith(".yml")) {
            return yaml(file);
        }
        if (name.endsWith(".properties")) {
            return properties(file);
        }
        throw new ConfigException(null, file + ": a configuration file must end in .yaml, .yml or .properties");
    }

    private static Map<String, String> yaml(Path file) throws IOException, ConfigException {
        YAMLMapper mapper = YAMLMapper.builder().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();
        JsonNode root;
        try {
            root = mapper.readTree(file.toFile());
        } catch (JsonProcessingException e) {
            throw new ConfigException(null, file + ": not valid YAML: " + e.getOriginalMessage().lines().findFirst()
                    .orElse("") + location(e));
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (root == null || root.isMissingNode() || root.isNull()) {
            return out;
        }
        if (!root.isObject()) {
            throw new ConfigException(null, file + ": expected a mapping of keys to values at the top");
        }
        flatten("", root, out, file);
        return out;
    }

    private static String location(JsonProcessingException e) {
        return e.getLocation() == null ? "" : " (line " + e.getLocation().getLineNr() + ", column "
                + e.getLocation().getColumnNr() + ")";
    }

    private static void flatten(String prefix, JsonNode node, Map<String, String> out, Path file) throws ConfigException {
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> f = fields.next();
            String key = prefix.isEmpty() ? f.getKey() : prefix + "." + f.getKey();
            JsonNode value = f.getValue();
            if (value.isObject()) {
                flatten(key, value, out, file);
            } else if (value.isArray()) {
                throw new ConfigException(key, file + ": " + key + ": expected a single value, got a list");
            } else if (value.isNull() || value.isMissingNode()) {
                throw new ConfigException(key, file + ": " + key + ": has no value");
            } else if (out.putIfAbsent(key, value.asText().trim()) != null) {
                throw new ConfigException(key, file + ": " + key + ": is given twice");
            }
        }
    }

    private static Map<String, String> properties(Path file) throws IOException, ConfigException {
        Map<String, String> out = new LinkedHashMap<>();
        String[] duplicate = new String[1];
        Properties props = new Properties() {
            private static final long serialVersionUID = 1L;

            @Override
            public synchronized Object put(Object key, Object value) {
                String k = ((String) key).trim();
                if (out.putIfAbsent(k, ((String) value).trim()) != null && duplicate[0] == null) {
                    duplicate[0] = k;
                }
                return super.put(key, value);
            }
        };
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(null, file + ": not a valid properties file: " + e.getMessage());
        }
        if (duplicate[0] != null) {
            throw new ConfigException(duplicate[0], file + ": " + duplicate[0] + ": is given twice");
        }
        return out;
    }
}
