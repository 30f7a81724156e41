package dev.felix.offload.scrub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.felix.offload.log.DataRoot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The scrub progress file: its golden bytes, what it refuses, and that a bad file only costs the hint. */
class ScrubProgressFileTest {

    @TempDir
    Path dir;

    private static final String GOLDEN = "felix-offload scrub progress 1\nruns=1048581\n"
            + "resume-at=acme_default_s-0_1-9f2d@4096\n";

    @Test
    void encodesToTheGoldenBytesAndBack() throws Exception {
        ScrubProgressFile.Progress p = new ScrubProgressFile.Progress(1048581,
                Optional.of(new Scrub.Cursor("acme_default_s-0_1-9f2d", 4096)));
        assertThat(new String(ScrubProgressFile.encode(p), StandardCharsets.US_ASCII)).isEqualTo(GOLDEN);
        assertThat(ScrubProgressFile.decode(GOLDEN.getBytes(StandardCharsets.US_ASCII))).isEqualTo(p);
        ScrubProgressFile.Progress none = new ScrubProgressFile.Progress(0, Optional.empty());
        assertThat(new String(ScrubProgressFile.encode(none), StandardCharsets.US_ASCII))
                .isEqualTo("felix-offload scrub progress 1\nruns=0\n");
        // A shard under groups/ and an offset above Long.MAX_VALUE (unsigned) come back as they went.
        ScrubProgressFile.Progress grouped = new ScrubProgressFile.Progress(7,
                Optional.of(new Scrub.Cursor("groups/g-1", -2L)));
        assertThat(ScrubProgressFile.decode(ScrubProgressFile.encode(grouped))).isEqualTo(grouped);
    }

    @Test
    void refusesWhatBreaksTheLayout() {
        for (String bad : new String[] {"", "felix-offload scrub progress 2\nruns=1\n", "felix-offload scrub progress 1\n",
                "felix-offload scrub progress 1\nruns=1", "felix-offload scrub progress 1\nruns=-1\n",
                "felix-offload scrub progress 1\nruns=1\nruns=2\n", "felix-offload scrub progress 1\nruns=x\n",
                "felix-offload scrub progress 1\nruns=1\nresume-at=nooffset\n",
                "felix-offload scrub progress 1\nruns=1\nother=1\n", "felix-offload scrub progress 1\nruns=1\n\n",
                "felix-offload scrub progress 1\nruns=99999999999999999999\n"}) {
            assertThatThrownBy(() -> ScrubProgressFile.decode(bad.getBytes(StandardCharsets.US_ASCII)))
                    .as("'%s'", bad).isInstanceOf(ScrubProgressFile.UnreadableException.class);
        }
        byte[] large = new byte[ScrubProgressFile.MAX_BYTES + 1];
        assertThatThrownBy(() -> ScrubProgressFile.decode(large)).isInstanceOf(ScrubProgressFile.UnreadableException.class)
                .hasMessageContaining("more than");
    }

    @Test
    void savedProgressIsLoadedAgainAndABadFileIsOnlyIgnored() throws Exception {
        DataRoot root = new DataRoot(dir);
        ScrubProgressFile file = new ScrubProgressFile(root);
        assertThat(file.load()).isEmpty();
        ScrubProgressFile.Progress p = new ScrubProgressFile.Progress(12, Optional.of(new Scrub.Cursor("s", 3)));
        file.save(p);
        assertThat(new ScrubProgressFile(root).load()).contains(p);
        Files.writeString(file.file(), "felix-offload scrub progress 1\nruns=");
        assertThat(file.load()).as("a torn file is ignored").isEmpty();
        Files.write(file.file(), new byte[ScrubProgressFile.MAX_BYTES + 10]);
        assertThat(file.load()).as("an oversized file is ignored before it is read").isEmpty();
        file.save(p);
        assertThat(file.load()).contains(p);
    }
}
