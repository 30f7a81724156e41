package dev.felix.offload.copy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The one count of how many oldest segments may leave local disk, for the offload pass and retention. */
class LocalRetentionTest {

    @Test
    void theActiveSegmentNeverGoes() {
        long[] one = {4096};
        assertThat(new LocalRetention.KeepBytes(0).removable(one)).isZero();
        assertThat(new LocalRetention.KeepSegments(1).removable(one)).isZero();
        assertThat(new LocalRetention.KeepBytes(0).removable(new long[] {10, 20, 30})).isEqualTo(2);
        assertThat(new LocalRetention.KeepAll().removable(new long[] {10, 20, 30})).isZero();
        assertThat(new LocalRetention.KeepBytes(0).removable(new long[0])).isZero();
    }

    @Test
    void keepBytesKeepsTheNewestThatFit() {
        long[] sizes = {100, 100, 100, 50};
        assertThat(new LocalRetention.KeepBytes(250).removable(sizes)).isEqualTo(1);
        assertThat(new LocalRetention.KeepBytes(249).removable(sizes)).isEqualTo(2);
        assertThat(new LocalRetention.KeepBytes(350).removable(sizes)).isZero();
        assertThat(new LocalRetention.KeepSegments(2).removable(sizes)).isEqualTo(2);
        assertThat(new LocalRetention.KeepSegments(9).removable(sizes)).isZero();
    }

    /** Retention's reading of local.retention.bytes: remove the oldest while the shard is over the limit. */
    @Property
    void keepBytesIsRemovingTheOldestWhileOverTheLimit(@ForAll @Size(max = 12) List<@LongRange(max = 1000) Long> sizes,
                                                      @ForAll @LongRange(max = 6000) long limit) {
        long[] s = sizes.stream().mapToLong(Long::longValue).toArray();
        long total = 0;
        for (long v : s) {
            total += v;
        }
        int removed = 0;
        while (removed < s.length - 1 && total > limit) {
            total -= s[removed++];
        }
        assertThat(new LocalRetention.KeepBytes(limit).removable(s)).isEqualTo(removed);
    }

    @Property
    void keepSegmentsLeavesThatMany(@ForAll @Size(max = 12) List<@LongRange(max = 1000) Long> sizes,
                                    @ForAll @IntRange(min = 1, max = 15) int keep) {
        long[] s = sizes.stream().mapToLong(Long::longValue).toArray();
        assertThat(new LocalRetention.KeepSegments(keep).removable(s)).isEqualTo(Math.max(0, s.length - keep));
    }
}
