package dev.felix.offload.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class KeyRulesTest {
    @Test
    void ordinaryKeysPass() throws Exception {
        assertThat(KeyRules.check("a")).isEqualTo("a");
        assertThat(KeyRules.check("tenant/ns/stream/00000000000000000042.log")).isNotNull();
        assertThat(KeyRules.check(".hidden/x..y/...z")).isNotNull();
        assertThat(KeyRules.check("ü/日本/😀")).isNotNull();
    }

    @Test
    void errorsNameTheKeyAndTheRule() {
        assertThatThrownBy(() -> KeyRules.check("a/../b")).hasMessageContaining("a/../b").hasMessageContaining("'..'");
        assertThatThrownBy(() -> KeyRules.check("a\u0000b")).hasMessageContaining("NUL").hasMessageContaining("a\\u0000b");
        assertThatThrownBy(() -> KeyRules.check("\uD800")).hasMessageContaining("surrogate");
        assertThatThrownBy(() -> KeyRules.check("é".repeat(513))).hasMessageContaining("1024 bytes");
    }

    /** Whatever passes the rules stays inside a root when resolved as a path. */
    @Property(tries = 2000)
    void acceptedKeysNeverLeaveTheRoot(@ForAll @StringLength(max = 40) String key) {
        Path root = Path.of("/srv/store-root");
        try {
            KeyRules.check(key);
        } catch (InvalidKeyException e) {
            return;
        }
        Path resolved = root.resolve(key).normalize();
        assertThat(resolved.startsWith(root)).isTrue();
        assertThat(resolved).isNotEqualTo(root);
    }

    @Property(tries = 500)
    void keysBuiltFromDotsAndSlashesThatPassAreSafe(@ForAll("dotty") String key) {
        acceptedKeysNeverLeaveTheRoot(key);
    }

    @net.jqwik.api.Provide
    net.jqwik.api.Arbitrary<String> dotty() {
        return net.jqwik.api.Arbitraries.strings().withChars('.', '/', 'a', '\\').ofMaxLength(12);
    }
}
