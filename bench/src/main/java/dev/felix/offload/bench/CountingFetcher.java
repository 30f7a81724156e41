package dev.felix.offload.bench;

import dev.felix.offload.store.ByteRange;
import dev.felix.offload.store.DownloadResult;
import dev.felix.offload.store.ObjectFetcher;
import dev.felix.offload.store.ObjectHead;
import dev.felix.offload.store.StoreException;

import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.atomic.LongAdder;

/** Counts the GETs made through it and the bytes they returned (HEADs counted apart). */
final class CountingFetcher implements ObjectFetcher {

    private final ObjectFetcher store;
    private final LongAdder gets = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder heads = new LongAdder();

    CountingFetcher(ObjectFetcher store) {
        this.store = store;
    }

    void reset() {
        gets.reset();
        bytes.reset();
        heads.reset();
    }

    long gets() {
        return gets.sum();
    }

    long bytes() {
        return bytes.sum();
    }

    long heads() {
        return heads.sum();
    }

    @Override
    public ObjectHead head(String key) throws StoreException {
        heads.increment();
        return store.head(key);
    }

    @Override
    public byte[] readRange(String key, ByteRange range) throws StoreException {
        gets.increment();
        byte[] b = store.readRange(key, range);
        bytes.add(b.length);
        return b;
    }

    @Override
    public void readRangeInto(String key, ByteRange range, java.util.List<byte[]> targets,
            java.util.function.IntConsumer filled) throws StoreException {
        gets.increment();
        store.readRangeInto(key, range, targets, filled);
        bytes.add(range.length());
    }

    @Override
    public byte[] readAll(String key, int maxSize, OptionalLong expectedCrc32) throws StoreException {
        gets.increment();
        byte[] b = store.readAll(key, maxSize, expectedCrc32);
        bytes.add(b.length);
        return b;
    }

    @Override
    public DownloadResult download(String key, Path target, OptionalLong expectedCrc32) throws StoreException {
        gets.increment();
        DownloadResult r = store.download(key, target, expectedCrc32);
        bytes.add(r.size());
        return r;
    }
}
