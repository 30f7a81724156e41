package dev.felix.offload.read;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReadAheadTest {

    private static final int CHUNK = 4096;
    /** 100 chunks. */
    private static final ObjectIdentity OBJECT = new ObjectIdentity("a", 100L * CHUNK, 1);

    @Test
    void aReaderSteppingIntoTheNextChunkGetsAWindowAheadAskedForWhenHalfOfItIsUsed() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        assertThat(ahead.touched(OBJECT, 0)).as("the first chunk says nothing yet").isNull();
        assertThat(ahead.touched(OBJECT, 0)).isNull();
        assertThat(ahead.touched(OBJECT, 1)).isEqualTo(new ReadAhead.Run(OBJECT, 2, 5));
        assertThat(ahead.sequential(OBJECT)).isTrue();
        assertThat(ahead.touched(OBJECT, 2)).as("three still ahead: enough").isNull();
        assertThat(ahead.touched(OBJECT, 3)).as("two ahead: the window moves on").isEqualTo(new ReadAhead.Run(OBJECT, 6, 7));
    }

    @Test
    void theWindowEndsAtTheObjectsLastChunk() {
        ReadAhead ahead = new ReadAhead(CHUNK, 8);
        ahead.touched(OBJECT, 96);
        assertThat(ahead.touched(OBJECT, 97)).isEqualTo(new ReadAhead.Run(OBJECT, 98, 99));
    }

    @Test
    void aReaderThatJumpsGetsNothingAhead() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        ahead.touched(OBJECT, 0);
        assertThat(ahead.touched(OBJECT, 10)).isNull();
        assertThat(ahead.touched(OBJECT, 3)).isNull();
        assertThat(ahead.sequential(OBJECT)).isFalse();
        assertThat(ahead.touched(OBJECT, 4)).as("stepping on from where it landed is sequential again")
                .isEqualTo(new ReadAhead.Run(OBJECT, 5, 8));
    }

    @Test
    void aReadThatJumpedIsNotSequentialWhenItCrossesIntoTheNextChunkUntilItContinues() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        ahead.jumpedTo(OBJECT, 20L * CHUNK + 100);
        assertThat(ahead.touched(OBJECT, 21)).isNull();
        assertThat(ahead.touched(OBJECT, 22)).isNull();
        assertThat(ahead.sequential(OBJECT)).isFalse();
        ahead.continuing(OBJECT);
        assertThat(ahead.touched(OBJECT, 23)).isEqualTo(new ReadAhead.Run(OBJECT, 24, 27));
    }

    @Test
    void aSequentialReaderIsCarriedIntoTheNextObjectOnce() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        ObjectIdentity next = new ObjectIdentity("b", 2L * CHUNK, 2);
        assertThat(ahead.continueInto(next)).isEqualTo(new ReadAhead.Run(next, 0, 1));
        assertThat(ahead.continueInto(next)).as("already under way").isNull();
        assertThat(ahead.continueInto(new ObjectIdentity("empty", 0, 0))).isNull();
    }

    @Test
    void aReadThatSaysItWantsMoreThanAChunkGetsWhatItCoversAtMostAWindow() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        assertThat(ahead.expect(OBJECT, 10L * CHUNK + 10, CHUNK)).as("a chunk or less: nothing").isNull();
        assertThat(ahead.expect(OBJECT, 10L * CHUNK + 10, 2L * CHUNK)).isEqualTo(new ReadAhead.Run(OBJECT, 10, 12));
        assertThat(ahead.expect(OBJECT, 30L * CHUNK, 100L * CHUNK)).isEqualTo(new ReadAhead.Run(OBJECT, 30, 33));
        assertThat(ahead.expect(OBJECT, OBJECT.size(), 2L * CHUNK)).as("outside the object").isNull();
    }

    @Test
    void withoutAWindowNothingIsEverAskedForAhead() {
        ReadAhead ahead = new ReadAhead(CHUNK, 0);
        for (long i = 0; i < 10; i++) {
            assertThat(ahead.touched(OBJECT, i)).isNull();
        }
        assertThat(ahead.continueInto(OBJECT)).isNull();
        assertThat(ahead.expect(OBJECT, 0, 10L * CHUNK)).isNull();
        assertThat(ahead.sequential(OBJECT)).isFalse();
    }

    @Test
    void aForgottenObjectStartsOver() {
        ReadAhead ahead = new ReadAhead(CHUNK, 4);
        ahead.touched(OBJECT, 0);
        ahead.touched(OBJECT, 1);
        ahead.forget(OBJECT);
        assertThat(ahead.sequential(OBJECT)).isFalse();
        assertThat(ahead.touched(OBJECT, 2)).as("a first touch again").isNull();
    }
}
