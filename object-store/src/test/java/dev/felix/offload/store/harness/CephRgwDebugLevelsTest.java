package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CephRgwDebugLevelsTest {

    @Test
    void everySubsystemGetsTheLevelAsked() {
        assertThat(CephRgw.debugLevels("0/0").lines())
                .contains("debug rgw = 0/0", "debug ms = 0/0", "debug osd = 0/0", "debug memstore = 0/0")
                .allMatch(line -> line.matches("debug [a-z_]+ = 0/0"));
        assertThat(CephRgw.debugLevels(" 1/5 ").lines()).contains("debug rgw = 1/5", "debug paxos = 1/5");
        assertThat(CephRgw.debugLevels("20").lines()).contains("debug rgw = 20");
        assertThat(CephRgw.debugLevels("default")).isEmpty();
    }

    @Test
    void aLevelCephWouldNotReadIsRefusedByName() {
        assertThatThrownBy(() -> CephRgw.debugLevels("verbose"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("felix.rgw.debug")
                .hasMessageContaining("verbose");
        assertThatThrownBy(() -> CephRgw.debugLevels("1/5\nrgw frontends = x"))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
