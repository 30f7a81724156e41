package dev.felix.offload.log.side;

/**
 * What the data root's {@code registration} file says: the node incarnation the control plane gave at
 * the node's last registration.
 *
 * @param incarnation the node incarnation, an unsigned 64-bit value
 */
public record Registration(long incarnation) {

    /**
     * True when the control plane's current incarnation for this node is ahead of this one: the
     * directory is older than the node's last registration (a restored volume snapshot, say), so a new
     * storage id must be written. Compared as unsigned 64-bit values.
     */
    public boolean isBehind(long controlPlaneIncarnation) {
        return Long.compareUnsigned(controlPlaneIncarnation, incarnation) > 0;
    }

    @Override
    public String toString() {
        return "Registration[incarnation=" + Long.toUnsignedString(incarnation) + "]";
    }
}
