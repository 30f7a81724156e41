package dev.felix.offload.store.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CephRgwDebugLevelsTest {

    @Test
    void everySubsystemIsQuietUnlessCephsOwnLevelsAreAsked() {
        assertThat(CephRgw.quietLogs("0/0").lines())
                .contains("debug rgw = 0/0", "debug ms = 0/0", "debug osd = 0/0", "debug memstore = 0/0")
                .allMatch(line -> line.matches("debug [a-z_]+ = 0/0"));
        assertThat(CephRgw.quietLogs(" 1/5 ")).isEqualTo(CephRgw.quietLogs("0/0"));
        assertThat(CephRgw.quietLogs("default")).isEmpty();
    }

    @Test
    void theGatewayAloneTakesALevelThatLogsRequests() {
        assertThat(CephRgw.gatewayLogs("1/5")).isEqualTo("debug rgw = 1/5");
        assertThat(CephRgw.gatewayLogs("20")).isEqualTo("debug rgw = 20");
        assertThat(CephRgw.gatewayLogs("0/0")).isEmpty();
        assertThat(CephRgw.gatewayLogs("default")).isEmpty();
    }

    @Test
    void aLevelCephWouldNotReadIsRefusedByName() {
        assertThatThrownBy(() -> CephRgw.quietLogs("verbose"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("felix.rgw.debug")
                .hasMessageContaining("verbose");
        assertThatThrownBy(() -> CephRgw.gatewayLogs("1/5\nrgw frontends = x")).isInstanceOf(IllegalArgumentException.class);
    }
}
