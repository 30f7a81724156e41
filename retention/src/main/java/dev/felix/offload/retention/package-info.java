/**
 * Local and remote retention (by bytes and by age), the orphan sweep, and the cron
 * schedule that runs the offload, retention and scrub passes without overlapping. Uses
 * <code>offload</code>.
 */
package dev.felix.offload.retention;
