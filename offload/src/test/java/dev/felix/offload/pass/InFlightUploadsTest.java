package dev.felix.offload.pass;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

class InFlightUploadsTest {

    private static boolean granted(InFlightUploads.Reservation r) throws Exception {
        return r.awaitOr(() -> true);
    }

    @Test
    void reservationsAreGrantedInTheOrderAskedWithinTheBytes() throws Exception {
        try (InFlightUploads uploads = new InFlightUploads(100, 8)) {
            InFlightUploads.Reservation a = uploads.reserve(60);
            InFlightUploads.Reservation b = uploads.reserve(60);
            InFlightUploads.Reservation c = uploads.reserve(10);
            assertThat(granted(a)).isTrue();
            assertThat(granted(b)).as("60 + 60 is over the bound").isFalse();
            assertThat(granted(c)).as("10 would fit, but b asked first").isFalse();
            assertThat(uploads.bytesInFlight()).isEqualTo(60);
            a.release();
            assertThat(granted(b)).isTrue();
            assertThat(granted(c)).isTrue();
            assertThat(uploads.bytesInFlight()).isEqualTo(70);
            a.release(); // a second release gives nothing back twice
            assertThat(uploads.bytesInFlight()).isEqualTo(70);
        }
    }

    @Test
    void aReservationLargerThanTheBoundWaitsForAllAndRunsAlone() throws Exception {
        try (InFlightUploads uploads = new InFlightUploads(100, 8)) {
            InFlightUploads.Reservation small = uploads.reserve(1);
            InFlightUploads.Reservation large = uploads.reserve(1_000);
            InFlightUploads.Reservation after = uploads.reserve(1);
            assertThat(granted(small)).isTrue();
            assertThat(granted(large)).isFalse();
            small.release();
            assertThat(granted(large)).isTrue();
            assertThat(uploads.bytesInFlight()).as("takes the whole bound").isEqualTo(100);
            assertThat(granted(after)).isFalse();
            large.release();
            assertThat(granted(after)).isTrue();
        }
    }

    @Test
    void theNumberOfUploadsIsBoundedToo() throws Exception {
        try (InFlightUploads uploads = new InFlightUploads(1_000, 2)) {
            InFlightUploads.Reservation a = uploads.reserve(1);
            InFlightUploads.Reservation b = uploads.reserve(1);
            InFlightUploads.Reservation c = uploads.reserve(1);
            assertThat(granted(a)).isTrue();
            assertThat(granted(b)).isTrue();
            assertThat(granted(c)).isFalse();
            b.release();
            assertThat(granted(c)).isTrue();
        }
    }

    @Test
    void aReservationGivenUpBeforeItsTurnLetsTheNextGo() throws Exception {
        try (InFlightUploads uploads = new InFlightUploads(100, 8)) {
            InFlightUploads.Reservation a = uploads.reserve(90);
            InFlightUploads.Reservation b = uploads.reserve(50);
            InFlightUploads.Reservation c = uploads.reserve(10);
            assertThat(granted(c)).isFalse();
            b.release();
            assertThat(granted(c)).isTrue();
            assertThat(uploads.bytesInFlight()).isEqualTo(100);
            a.release();
            c.release();
            assertThat(uploads.bytesInFlight()).isZero();
        }
    }

    @Test
    void anUploadGivesItsBytesBackWhenItEndsAndWakesTheWaiter() throws Exception {
        try (InFlightUploads uploads = new InFlightUploads(100, 8)) {
            InFlightUploads.Reservation a = uploads.reserve(100);
            InFlightUploads.Reservation b = uploads.reserve(100);
            assertThat(granted(a)).isTrue();
            CountDownLatch go = new CountDownLatch(1);
            a.run(() -> {
                try {
                    go.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(granted(b)).isFalse();
            go.countDown();
            assertThat(b.awaitOr(() -> false)).as("woken once a's upload ended").isTrue();
            assertThat(uploads.bytesInFlight()).isEqualTo(100);
        }
    }

    @Test
    void anUploadHandedToAClosedPassIsRefusedAndGivesItsBytesBack() throws Exception {
        InFlightUploads uploads = new InFlightUploads(100, 8);
        InFlightUploads.Reservation a = uploads.reserve(100);
        InFlightUploads.Reservation b = uploads.reserve(100);
        assertThat(granted(a)).isTrue();
        uploads.close();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> a.run(() -> { }))
                .isInstanceOf(java.util.concurrent.RejectedExecutionException.class);
        assertThat(granted(b)).as("a's bytes came back").isTrue();
    }

    @Test
    void underABandwidthLimitAboutOneSecondOfItIsInFlight() {
        OffloadSettings settings = OffloadSettings.defaults();
        assertThat(InFlightUploads.bound(settings)).isEqualTo(OffloadSettings.DEFAULT_MAX_BYTES_IN_FLIGHT);
        assertThat(InFlightUploads.bound(settings.withUploadBytesPerSecond(64 << 10))).isEqualTo(64 << 10);
        assertThat(InFlightUploads.bound(settings.withUploadBytesPerSecond(1L << 30))).isEqualTo(256L << 20);
    }
}
