package dev.felix.offload.store.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.felix.offload.store.IntegrityRejectedException;
import dev.felix.offload.store.PreconditionFailedException;
import dev.felix.offload.store.StoreAnswer;
import dev.felix.offload.store.StoreException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * How the probe's findings are kept and believed, over a server in memory that checks CRC32s and
 * conditional puts and answers under a {@code Server} header of its own: every request the probe
 * would send is counted, so "no probe" and "no write" are seen, not assumed. (The same through the
 * runnable jar against S3Mock: ProbeFindingsIT.)
 */
class ServerProbeFindingsTest {

    private static final Instant NOW = Instant.parse("2026-12-04T12:00:00Z");
    private static final ServerTraits CHECKS_EVERYTHING = new ServerTraits(true, true, true, true, true, true);

    /** A server in memory; it tells the probe its identity on every answer, as a wire does. */
    static final class Server implements CapabilityProbe.Target {
        final Map<String, byte[]> objects = new ConcurrentHashMap<>();
        final List<String> writes = Collections.synchronizedList(new ArrayList<>());
        final List<String> reads = Collections.synchronizedList(new ArrayList<>());
        volatile String identity = "TestServer/1";
        ServerProbe probe;

        private void answered() {
            if (probe != null) {
                probe.answered(identity);
            }
        }

        @Override
        public String put(String fullKey, byte[] body, OptionalLong crc32, Optional<String> contentMd5,
                boolean createOnly) throws StoreException {
            writes.add("PUT " + fullKey);
            answered();
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(body);
            if (crc32.isPresent() && crc32.getAsLong() != crc.getValue()) {
                throw new IntegrityRejectedException("bad crc", fullKey, new StoreAnswer(400, "BadDigest"), null);
            }
            byte[] md5 = dev.felix.offload.store.BodyDigests.md5().digest(body);
            if (contentMd5.isPresent() && !contentMd5.get().equals(java.util.Base64.getEncoder().encodeToString(md5))) {
                throw new IntegrityRejectedException("bad md5", fullKey, new StoreAnswer(400, "BadDigest"), null);
            }
            if (createOnly && objects.containsKey(fullKey)) {
                throw new PreconditionFailedException("exists", fullKey, new StoreAnswer(412, "PreconditionFailed"), null);
            }
            objects.put(fullKey, body);
            return java.util.HexFormat.of().formatHex(md5);
        }

        @Override
        public OptionalLong storedCrc32(String fullKey) {
            reads.add("HEAD " + fullKey);
            answered();
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(objects.get(fullKey));
            return OptionalLong.of(crc.getValue());
        }

        @Override
        public void delete(String fullKey) {
            writes.add("DELETE " + fullKey);
            answered();
            objects.remove(fullKey);
        }

        @Override
        public List<String> listFullKeys(String fullPrefix) {
            reads.add("LIST " + fullPrefix);
            answered();
            return objects.keySet().stream().filter(k -> k.startsWith(fullPrefix)).sorted().toList();
        }

        @Override
        public Optional<byte[]> read(String fullKey) throws StoreException {
            reads.add("GET " + fullKey);
            answered();
            return Optional.ofNullable(objects.get(fullKey));
        }

        long probePuts() {
            return writes.stream().filter(w -> w.contains(".felix-probe/")).count();
        }
    }

    private static RemoteStoreSettings settings() {
        return RemoteStoreSettings.builder("bucket").endpoint(java.net.URI.create("http://store:9000")).prefix("p").build();
    }

    private static ServerProbe probe(Server server, ProbeOptions options, Instant now) {
        ServerProbe p = new ServerProbe(settings(), server, options, Clock.fixed(now, ZoneOffset.UTC));
        server.probe = p;
        return p;
    }

    private static ServerFindings kept(String identity, Instant learnt, ServerTraits traits) {
        return new ServerFindings(ServerFindings.Key.of(settings()), identity, learnt, traits, OptionalLong.empty());
    }

    @Test
    void aWriterProbesOnceKeepsWhatItFoundInTheKeepAndTheStoreAndTheNextStoreReusesIt() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        ServerProbe first = probe(server, ProbeOptions.writer(keep, false), NOW);
        assertThat(first.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(first.source()).isEqualTo(ServerProbe.Source.PROBED);
        assertThat(server.probePuts()).isPositive();
        assertThat(server.objects.keySet()).as("the probe's objects are gone; its findings' copy stays")
                .containsExactly("p/.felix-store/findings");
        ServerFindings found = keep.load(ServerFindings.Key.of(settings())).orElseThrow();
        assertThat(found.serverIdentity()).isEqualTo("TestServer/1");
        assertThat(found.learntAt()).isEqualTo(NOW);

        server.writes.clear();
        ServerProbe second = probe(server, ProbeOptions.writer(keep, false), NOW.plusSeconds(3600));
        assertThat(second.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(second.source()).isEqualTo(ServerProbe.Source.KEPT);
        assertThat(server.writes).as("kept findings: nothing written").isEmpty();
        assertThat(server.reads).as("a writer first sees which server answers").contains("LIST p/.felix-store/");
    }

    @Test
    void aReaderNeverProbesUsingTheKeepTheStoresCopyOrNothing() throws Exception {
        Server server = new Server();
        ServerProbe reader = probe(server, ProbeOptions.reader(FindingsKeep.inMemory()), NOW);
        assertThat(reader.capabilities()).containsExactly(dev.felix.offload.store.StoreCapability.USER_METADATA);
        assertThat(reader.source()).isEqualTo(ServerProbe.Source.ASSUMED);
        assertThat(server.writes).isEmpty();

        probe(server, ProbeOptions.writer(FindingsKeep.inMemory(), false), NOW).traits();
        server.writes.clear();
        FindingsKeep readersKeep = FindingsKeep.inMemory();
        ServerProbe fromCopy = probe(server, ProbeOptions.reader(readersKeep), NOW.plusSeconds(60));
        assertThat(fromCopy.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(fromCopy.source()).isEqualTo(ServerProbe.Source.STORE_COPY);
        assertThat(server.writes).isEmpty();
        assertThat(readersKeep.load(ServerFindings.Key.of(settings()))).as("a reader keeps nothing").isEmpty();
    }

    @Test
    void findingsOlderThanTheirAgeAreProbedAgainAndAReaderThenAssumesNothing() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        ServerTraits checksNothing = new ServerTraits(false, false, false, false, false, false);
        keep.save(kept("TestServer/1", NOW.minus(Duration.ofDays(2)), checksNothing));
        assertThat(probe(server, ProbeOptions.reader(keep), NOW).capabilities())
                .containsExactly(dev.felix.offload.store.StoreCapability.USER_METADATA);
        assertThat(server.writes).isEmpty();
        ServerProbe writer = probe(server, ProbeOptions.writer(keep, false), NOW);
        assertThat(writer.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(server.probePuts()).isPositive();
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().learntAt()).isEqualTo(NOW);
    }

    @Test
    void anOperatorsRequestProbesWhateverIsKept() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        keep.save(kept("TestServer/1", NOW.minusSeconds(60), new ServerTraits(true, false, false, false, false, false)));
        ServerProbe asked = probe(server, ProbeOptions.writer(keep, true), NOW);
        assertThat(asked.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(asked.source()).isEqualTo(ServerProbe.Source.PROBED);
        assertThat(server.probePuts()).isPositive();
    }

    @Test
    void anotherServerAnsweringContradictsKeptFindingsAndAWriterProbesAgain() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        keep.save(kept("OtherServer/2", NOW.minusSeconds(60), new ServerTraits(true, false, false, false, false, false)));
        ServerProbe writer = probe(server, ProbeOptions.writer(keep, false), NOW);
        assertThat(writer.traits()).as("learnt again before a writer acts on them").isEqualTo(CHECKS_EVERYTHING);
        assertThat(writer.source()).isEqualTo(ServerProbe.Source.PROBED);
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().serverIdentity()).isEqualTo("TestServer/1");
    }

    @Test
    void aContradictionDropsTheFindingsFromTheKeepAndTheNextUseLearnsThemAgain() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        ServerTraits ignoresConditions = new ServerTraits(true, true, true, false, true, true);
        keep.save(kept("TestServer/1", NOW.minusSeconds(60), ignoresConditions));
        ServerProbe writer = probe(server, ProbeOptions.writer(keep, false), NOW);
        assertThat(writer.traits()).isEqualTo(ignoresConditions);
        writer.contradicted("a create-only put was refused with 412");
        assertThat(server.writes).isEmpty();
        assertThat(writer.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(server.probePuts()).isPositive();
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().traits()).isEqualTo(CHECKS_EVERYTHING);

        // This process's own fresh probe is not overturned by one answer.
        server.writes.clear();
        writer.contradicted("another odd answer");
        assertThat(writer.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(server.writes).isEmpty();
    }

    @Test
    void aMeasuredUploadRateIsKeptWithTheFindingsFirstAtOnceThenAtClose() throws Exception {
        Server server = new Server();
        FindingsKeep keep = FindingsKeep.inMemory();
        ServerProbe writer = probe(server, ProbeOptions.writer(keep, false), NOW);
        writer.traits();
        writer.keepUploadRate(300L << 20);
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().uploadRate()).hasValue(300L << 20);
        writer.keepUploadRate(100L << 20);
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().uploadRate()).as("not at every change")
                .hasValue(300L << 20);
        writer.close();
        assertThat(keep.load(ServerFindings.Key.of(settings())).orElseThrow().uploadRate()).hasValue(100L << 20);
        ServerProbe next = probe(server, ProbeOptions.writer(keep, false), NOW.plusSeconds(60));
        next.traits();
        assertThat(next.keptUploadRate()).hasValue(100L << 20);

        server.writes.clear();
        FindingsKeep readersKeep = FindingsKeep.inMemory();
        ServerProbe reader = probe(server, ProbeOptions.reader(readersKeep), NOW.plusSeconds(60));
        reader.traits();
        reader.keepUploadRate(1);
        reader.close();
        assertThat(server.writes).as("a reader writes nothing").isEmpty();
        assertThat(readersKeep.load(ServerFindings.Key.of(settings()))).isEmpty();
    }

    @Test
    void aStoreWithFindingsInMemoryOnlyLeavesNothingInTheBucket() throws Exception {
        Server server = new Server();
        ServerProbe library = new ServerProbe(settings(), server);
        server.probe = library;
        assertThat(library.traits()).isEqualTo(CHECKS_EVERYTHING);
        assertThat(server.objects).isEmpty();
        assertThat(server.reads).noneMatch(r -> r.contains(".felix-store/"));
    }

    @Test
    void theProbesRequestsGoTogether() throws Exception {
        Server server = new Server();
        java.util.concurrent.CyclicBarrier fivePuts = new java.util.concurrent.CyclicBarrier(5);
        CapabilityProbe.Target together = new CapabilityProbe.Target() {
            @Override
            public String put(String fullKey, byte[] body, OptionalLong crc32, Optional<String> contentMd5,
                    boolean createOnly) throws StoreException {
                if (!createOnly && !fullKey.contains(".felix-store/")) {
                    try {
                        // the five puts of the first round must all be in flight at once to get past this
                        fivePuts.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new AssertionError("the probe's first puts did not go together", e);
                    }
                }
                return server.put(fullKey, body, crc32, contentMd5, createOnly);
            }

            @Override
            public OptionalLong storedCrc32(String fullKey) {
                return server.storedCrc32(fullKey);
            }

            @Override
            public void delete(String fullKey) {
                server.delete(fullKey);
            }

            @Override
            public List<String> listFullKeys(String fullPrefix) {
                return server.listFullKeys(fullPrefix);
            }
        };
        assertThat(CapabilityProbe.run(together, settings())).isEqualTo(CHECKS_EVERYTHING);
        assertThat(server.objects).isEmpty();
    }
}
