package dev.felix.offload.scrub;

import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RequestBudgetTest {

    @Test
    void noBudgetAdmitsEveryEntry() {
        RequestBudget budget = new RequestBudget(0);
        long terabyteRead = 1 + (1L << 40) / EntryCheck.READ_CHUNK;
        for (int i = 0; i < 1000; i++) {
            assertThat(budget.admit("s", i, terabyteRead, i == 0)).isTrue();
        }
        assertThat(budget.spent()).isFalse();
        assertThat(budget.resumeAt()).isEmpty();
        assertThat(budget.note(1000, 1000)).isEmpty();
    }

    @Test
    void theFirstEntryThatDoesNotFitIsWhereTheNextRunStarts() {
        RequestBudget budget = new RequestBudget(5);
        assertThat(budget.admit("a", 0, 2, true)).isTrue();
        assertThat(budget.admit("a", 10, 3, false)).isTrue(); // exactly what is left
        assertThat(budget.admit("b", 20, 1, false)).isFalse();
        assertThat(budget.spent()).isTrue();
        assertThat(budget.resumeAt()).contains(new Scrub.Cursor("b", 20));
        // once spent, nothing more is admitted, not even an entry that would fit, and the cursor stays
        assertThat(budget.admit("c", 0, 0, false)).isFalse();
        assertThat(budget.resumeAt()).contains(new Scrub.Cursor("b", 20));
    }

    @Test
    void anEntryCostingMoreThanTheWholeBudgetIsCheckedWhenARunStartsWithIt() {
        RequestBudget budget = new RequestBudget(3);
        assertThat(budget.admit("a", 0, 100, true)).isTrue();
        assertThat(budget.spent()).isFalse();
        assertThat(budget.admit("a", 1, 1, false)).isFalse();
        assertThat(budget.resumeAt()).contains(new Scrub.Cursor("a", 1));
    }

    @Test
    void theNoteNamesTheBudgetTheShareCheckedAndTheCursor() {
        RequestBudget budget = new RequestBudget(4);
        budget.admit("s", 0, 4, true);
        budget.admit("s", 100, 1, false);
        assertThat(budget.note(1, 3)).isEqualTo(Optional.of("the request budget of 4 ran out after 1 of 3 entries "
                + "(33.3%); the next run starts at shard s at offset 100 (--start-at s@100)"));
    }

    @Test
    void aNegativeBudgetIsRefused() {
        assertThatThrownBy(() -> new RequestBudget(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("-1");
    }
}
