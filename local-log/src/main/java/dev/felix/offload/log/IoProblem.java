package dev.felix.offload.log;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * An I/O error as an operator reads it: the file and the cause ("permission denied", "No space left
 * on device"), decided on the exception's type, not its text. The JDK's own messages name only the
 * file for some types (an {@link AccessDeniedException} is just a path) and only the cause for others.
 */
public final class IoProblem {

    private IoProblem() {
    }

    /** The file and the cause, or the message and its cause's. */
    public static String describe(IOException e) {
        if (e instanceof FileSystemException f && f.getFile() != null) {
            String cause;
            if (f instanceof AccessDeniedException) {
                cause = "permission denied";
            } else if (f instanceof NoSuchFileException) {
                cause = "no such file or directory";
            } else if (f instanceof FileAlreadyExistsException) {
                cause = "already exists";
            } else if (f instanceof NotDirectoryException) {
                cause = "not a directory";
            } else if (f instanceof DirectoryNotEmptyException) {
                cause = "directory not empty";
            } else {
                cause = f.getReason() == null ? f.getClass().getSimpleName() : f.getReason();
            }
            return f.getFile() + (f.getOtherFile() == null ? "" : " -> " + f.getOtherFile()) + ": " + cause;
        }
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        // A wrapper (ours say what they were doing) keeps its own words and adds the cause's.
        if (e.getCause() instanceof IOException inner && inner != e) {
            String below = describe(inner);
            if (!message.contains(below)) {
                message = message + ": " + below;
            }
        }
        return message;
    }
}
