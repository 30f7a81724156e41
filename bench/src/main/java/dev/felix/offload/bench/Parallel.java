package dev.felix.offload.bench;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/** Runs a section's calls on a pool of its own and waits for every one; the first failure, in order, is thrown. */
final class Parallel {

    private Parallel() {
    }

    /** Runs {@code calls}, {@code threads} at a time; an interrupt or a call's failure is an {@link IOException}. */
    static void run(int threads, List<? extends Callable<?>> calls) throws IOException {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Callable<Object>> tasks = new java.util.ArrayList<>(calls.size());
            for (Callable<?> c : calls) {
                tasks.add(c::call);
            }
            for (Future<?> f : pool.invokeAll(tasks)) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        } catch (ExecutionException e) {
            throw new IOException(e.getCause());
        } finally {
            pool.shutdownNow();
        }
    }
}
