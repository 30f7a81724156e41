package dev.felix.offload.daemon;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.stream.IntStream;

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

    /**
     * The largest configuration file read. A complete file with comments is a few KiB; the bound keeps a
     * wrong path (a log file, a disk image) from being read into memory whole before it is refused.
     */
    static final int MAX_BYTES = 1024 * 1024;

    private ConfigFile() {
    }

    /** The file's keys and values (trimmed), in file order. */
    static Map<String, String> read(Path file) throws IOException, ConfigException {
        String name = file.getFileName() == null ? file.toString() : file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!Files.isRegularFile(file)) {
            throw new NoSuchFileException(file.toString(), null, "no configuration file");
        }
        boolean yaml = name.endsWith(".yaml") || name.endsWith(".yml");
        if (!yaml && !name.endsWith(".properties")) {
            throw new ConfigException(null, file + ": a configuration file must end in .yaml, .yml or .properties");
        }
        String text = text(file);
        return yaml ? yaml(file, text) : properties(file, text);
    }

    /** The file as UTF-8 text, refused past {@link #MAX_BYTES} or at its first byte that is not UTF-8. */
    private static String text(Path file) throws IOException, ConfigException {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            // One byte more than allowed tells a file at the limit from one past it, even one still growing.
            bytes = in.readNBytes(MAX_BYTES + 1);
        }
        if (bytes.length > MAX_BYTES) {
            throw new ConfigException(null, file + ": is larger than " + MAX_BYTES / 1024
                    + " KiB; is it the configuration file?");
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(in, out, true);
        if (result.isError()) {
            int at = in.position();
            long line = 1 + IntStream.range(0, at).filter(i -> bytes[i] == '\n').count();
            throw new ConfigException(null, String.format("%s: not UTF-8: byte 0x%02x at byte %d (line %d)", file,
                    bytes[at] & 0xff, at, line));
        }
        return out.flip().toString();
    }

    private static Map<String, String> yaml(Path file, String text) throws IOException, ConfigException {
        YAMLMapper mapper = YAMLMapper.builder().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION).build();
        JsonNode root;
        try {
            root = mapper.readTree(text);
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

    private static Map<String, String> properties(Path file, String text) throws IOException, ConfigException {
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
        try (Reader in = new StringReader(text)) {
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
