"""The verdicts `scripts/mutation.py` cannot reach by running tests: the
survivors that behave as the original (`EQUIVALENT`, each with the reason),
and the ones only a fresh process kills (`BEFORE_THE_FORK`). Keyed by
mutmut's name, which is stable while the function's source is unchanged."""

from __future__ import annotations

# Survivors no test can kill: the mutant behaves as the original. Keyed by
# mutmut's name (stable while the function's source is unchanged).
_GATES = "the gates and the per-field search only skip work (tests/test_guard.py: every sample gives the same findings gated and ungated)"
_ENCODING = "`UTF-8` names the same codec, and so does the locale's here (Python makes the C locale UTF-8)"
_ENCODINGS = (
    *(f"x_recover__mutmut_{n}" for n in (5, 7)),
    *(f"x_kept__mutmut_{n}" for n in (2, 5)),
    "x_keep__mutmut_10",
    *(f"x_replace_all__mutmut_{n}" for n in (21, 24, 31)),
)
_FALSY = '`pairs` is only tested for truth: `""` and None are both false'
_LOCKED = "recovery runs under the lock: a file it has just read or listed is still there to unlink"
EQUIVALENT: dict[str, str] = {
    "grimoire_cli.guard.rules.x__luhn__mutmut_12": "a doubled digit is even, never 9: `> 9` and `>= 9` agree",
    "grimoire_cli.guard.rules.x__luhn__mutmut_18": "the negated total is a multiple of 10 exactly when the total is",
    "grimoire_cli.guard.rules.x__card_ok__mutmut_16": "the card pattern takes 13 to 19 digits: 20 never reaches the check",
    "grimoire_cli.guard.rules.x__card_ok__mutmut_19": "the first character is a digit, never an X",
    "grimoire_cli.guard.rules.x_secretish__mutmut_1": "every caller passes `quoted`",
    "grimoire_cli.guard.rules.x_names_no_secret__mutmut_1": "every caller passes `value`",
    "grimoire_cli.guard.rules.x__name__mutmut_7": "the piece before the first space holds no space to strip",
    "grimoire_cli.guard.rules.x__name__mutmut_8": "a name's words (`_WORDS`) never hold a dash: where it is stripped changes none",
    "grimoire_cli.guard.rules.x__name__mutmut_14": "only the first piece of the split is used",
    "grimoire_cli.guard.rules.x__name__mutmut_17": "only the first piece of the split is used",
    "grimoire_cli.guard.rules.x__base64_jwt_ok__mutmut_3": "`=` only ends the match, and the slice stops before it either way",
    "grimoire_cli.guard.rules.x__base64_jwt_ok__mutmut_4": "the match starts with `ZXlK`, never with `=`",
    "grimoire_cli.guard.rules.x__base64_jwt_ok__mutmut_15": "the decoded part holds only base64 characters: validation never fails",
    "grimoire_cli.guard.rules.x__base64_jwt_ok__mutmut_16": "the decoded part holds only base64 characters: validation never fails",
    "grimoire_cli.guard.rules.x__base64_jwt_ok__mutmut_18": "`ASCII` names the same codec",
    "grimoire_cli.guard.scan.x__runnable__mutmut_26": "1 digit for an entry with no text: no rule matches the empty text",
    "grimoire_cli.guard.scan.x__runnable__mutmut_5": "folding is a no-op on text without `ſ`, `ı`, `İ` or `K`",
    "grimoire_cli.guard.scan.x__runnable__mutmut_8": "ASCII text never holds `ſ`, `ı`, `İ` or `K`: folding it is a no-op",
    **{
        f"grimoire_cli.guard.scan.xǁ_Compiledǁhas_shape__mutmut_{n}": "the case of a shape matters to no rule: the one case-insensitive shape with letters carries its own `(?i)`"
        for n in (9, 10, 12, 13)
    },
    "grimoire_cli.guard.scan.x__finding__mutmut_21": "a line break before the field's start gives a column start below `base`, which max() replaces",
    "grimoire_cli.guard.scan.x__unpaired__mutmut_2": "the kind of the finding that places the tag is never read",
    "grimoire_cli.guard.scan.x__unpaired__mutmut_8": "the kind of the finding that places the tag is never read",
    "grimoire_cli.guard.scan.xǁ_Compiledǁhas_shape__mutmut_8": "the one case-insensitive rule whose shape holds letters (`--password`) carries its own `(?i)`",
    **{f"grimoire_cli.storage.journal.{name}": _ENCODING for name in _ENCODINGS},
    **{f"grimoire_cli.storage.journal.{name}": _FALSY for name in ("x_recover__mutmut_8", "x_recover__mutmut_9")},
    **{f"grimoire_cli.storage.journal.x_recover__mutmut_{n}": _LOCKED for n in (10, 11, 22, 23, 31, 32)},
    **{
        f"grimoire_cli.storage.journal.x_write_atomic__mutmut_{n}": "the rename failed: the temp file is still there to unlink"
        for n in (13, 15)
    },
    **{
        f"grimoire_cli.storage.journal.x_replace_all__mutmut_{n}": "under the lock, the temp files (50, 52) and the "
        "journal (64, 65) it has just written are still there to unlink"
        for n in (50, 52, 64, 65)
    },
    **{
        f"grimoire_cli.storage.journal.x__temp_copy__mutmut_{n}": "the temp file that failed is still there to unlink"
        for n in (33, 35)
    },
    "grimoire_cli.storage.journal.x__umask__mutmut_3": "the mask set for the moment is put back before anything is created",
    **{
        f"grimoire_cli.memory.entry_rules.x_check_entry__mutmut_{n}": "the fast check only decides whether jsonschema "
        "runs; on an entry without a problem jsonschema finds none either"
        for n in (34, 36)
    },
    "grimoire_cli.memory.entry_rules.x_check_entry__mutmut_72": "an additionalProperties error always has an extra key",
    **{
        f"grimoire_cli.memory.entry_rules.x_link_of__mutmut_{n}": "the default `kind` is never used: its one caller "
        "(validate_files.py) passes the category's"
        for n in (1, 2)
    },
    "grimoire_cli.memory.entry_rules.x__check_expiry__mutmut_55": '`wanted` is only tested for truth: `""` and None are both false',
    **{
        f"grimoire_cli.memory.entry_rules.x__check_expiry__mutmut_{n}": "ttl permanent gives no `wanted` time "
        "(`expires_at` is None for it): the `and wanted` after the changed test stops it alone"
        for n in (80, 81)
    },
    **{
        f"grimoire_cli.guard.scan.{name}": _GATES
        for name in (
            *(f"x_scan__mutmut_{n}" for n in (1, 11, 14, 16, 18)),
            *(f"x_scan_fields__mutmut_{n}" for n in (1, 24, 25, 26, 29, 30, 32, 33, 43, 44, 48)),
            *(f"x__matches__mutmut_{n}" for n in (1, 3, 12, 14)),
            *(f"x__runnable__mutmut_{n}" for n in (1, 2, 20, 30)),
            *(f"x__spans__mutmut_{n}" for n in (1, 7, 33)),
        )
    },
}
_SEARCH = "grimoire_cli.retrieval.search"
_ONLY_WORK = (
    "`_known` only spares work: a known word of four letters or more is its own nearest word (distance 0), "
    "a shorter one matches as it is: the term is the same"
)
_FILES_READ = "the filter's states decide what is found; which files the catalog reads only costs time"
EQUIVALENT.update(
    {
        **{f"{_SEARCH}.x__known__mutmut_{n}": _ONLY_WORK for n in (1, 2, 4, 5, 6, 7)},
        f"{_SEARCH}.x_terms__mutmut_42": _ONLY_WORK,
        **{
            f"{_SEARCH}.x__quoted__mutmut_{n}": "a word (`scoring.words`) never holds a double quote to double"
            for n in (8, 9)
        },
        **{f"{_SEARCH}.x_filtered_out__mutmut_{n}": "`Filter` takes floors=None as {}" for n in (6, 83)},
        **{
            f"{_SEARCH}.x_filtered_out__mutmut_{n}": "the floors kept are the categories' own floors below the "
            "default: an entry under its category's floor is refused on write and reported by `mem validate`"
            for n in (8, 90)
        },
        **{
            f"{_SEARCH}.x_filtered_out__mutmut_{n}": "only `.total` is read, which counts the matches past the limit"
            for n in (64, 72)
        },
        **{
            f"{_SEARCH}.x_hits__mutmut_{n}": "both callers pass what `ranked` returns, a Ranking, which always has "
            "`notes`: the default is never read"
            for n in (21, 24)
        },
        **{f"{_SEARCH}.x_ranked_or_newest__mutmut_{n}": _FILES_READ for n in (12, 19)},
        **{
            f"{_SEARCH}.x__parts__mutmut_{n}": "every tier an entry has (`model.tier`) is a key of TIER_BONUS: the "
            "default is never used"
            for n in (14, 16, 17)
        },
        **{
            f"{_SEARCH}.x_filtered_out__mutmut_{n}": "only `query` puts `archived` among the states, and then reads "
            "the archive too (`include_archive`): lifting it again asks the same filter, which found nothing"
            for n in (17, 18)
        },
        f"{_SEARCH}.xǁRankingǁ__init____mutmut_6": "no caller gives a Ranking notes (each starts empty and appends): "
        "`notes` is always None here",
        f"{_SEARCH}.x_filtered_out__mutmut_80": "with one filter lifted, lifting them all asks that same filter "
        "(the floors aside, see 8 and 90): `together` would count the nothing it found",
        **{
            f"{_SEARCH}.{name}": "only recipes give `query`, as `expression(store, text)`: what the callee works "
            "out from `text` when it is None (from the same vocabulary, while no other process writes meanwhile)"
            for name in ("x_ranked__mutmut_13", "x_ranked__mutmut_27", "x__hybrid__mutmut_10", "x__hybrid__mutmut_45")
        },
        **{
            f"{_SEARCH}.x__lexical__mutmut_{n}": "the catalog's first rows do not depend on its limit (the kept "
            "and the lent-to, `catalog.rank`; tests/test_coverage.py: the first hits do not depend on the "
            "limit), and the same best COVERAGE_POOL are covered: an unlimited read only costs time"
            for n in (13, 27)
        },
        f"{_SEARCH}.x__lexical__mutmut_34": "a weight of 0 adds 0 to every score, and the pool is already in "
        "`covered`'s order (the catalog's `ORDER BY score DESC, id, rowid`): it only costs the lookups",
        f"{_SEARCH}.x__lexical__mutmut_47": "`rows[:None]` is every row",
        **{
            f"{_SEARCH}.{name}": "`terms_held` reads rows the ranking has just brought up to date: each file is "
            "fresh (`Store._fresh`), so which files it would read again changes nothing, and a catalog that "
            "failed meanwhile is named, not asked (`Store._held`)"
            for name in ("x__lexical__mutmut_40", "x_covered__mutmut_11")
        },
        **{
            f"{_SEARCH}.x_covered__mutmut_{n}": "the default of a pooled row that holds none of the query's terms: "
            "every pooled row matched them OR-ed, and the ranking and its coverage read one snapshot of the "
            "catalog (`Connection.hold`; tests/test_coverage.py: another process re-indexing between them), so "
            "each row holds one"
            for n in (19, 21, 22)
        },
    }
)
EQUIVALENT.update(
    {
        f"grimoire_cli.git.sides.x__fetched_for_merge__mutmut_{n}": "`UTF-8` names the same codec, and so does "
        "the locale's here (Python makes the C locale UTF-8)"
        for n in (2, 4, 10)
    }
)
_SIDES = "grimoire_cli.git.sides.xǁ_SharedHistoryǁ"
EQUIVALENT.update(
    {
        **{
            f"{_SIDES}{name}": "`check` is only tested for truth: None and False are both false"
            for name in ("__init____mutmut_7", "rank__mutmut_5")
        },
        f"{_SIDES}rank__mutmut_13": "`XX--format=%(refname)XX` is one more pattern, which no ref matches: the "
        "default format's lines hold each ref's name too (beside its object id and type), so `containing` "
        "meets the default branches, and is empty, alike",
    }
)
_FLAT = "grimoire_cli.git.flattened"
_ONE_TAB = "every line of the log holds the format's tab: the piece before the first one is the same however it splits"
_LS_TREE = "ls-tree quotes a path that holds a tab (no -z): each line holds exactly one, before the path"
_CACHE = "grimoire_cli.git.mapping_cache"
_ASCII = "json.dump escapes every character past ASCII (ensure_ascii): the file reads alike in any of these codecs"
EQUIVALENT.update(
    {
        f"{_FLAT}.x_strays__mutmut_14": "`XXXX` is one row of one field, never a merge: nothing is dropped either way",
        **{f"{_FLAT}.x_strays__mutmut_{n}": _ONE_TAB for n in (19, 22)},
        f"{_FLAT}.x_strays__mutmut_31": "split once at a tab every line holds: two pieces, so [1] is [-1]",
        f"{_FLAT}.x__blobs__mutmut_11": "ls-tree takes the paths after the revision: `XX--XX` is one more path, which "
        "no tree holds",
        f"{_FLAT}.x__blobs__mutmut_12": "`XXXX` holds no tab: no file either way",
        **{f"{_FLAT}.x__blobs__mutmut_{n}": _LS_TREE for n in (16, 17, 19)},
        **{f"{_CACHE}.x_load__mutmut_{n}": _ASCII for n in (3, 6)},
        **{f"{_CACHE}.x_save__mutmut_{n}": _ASCII for n in (10, 13, 17)},
        **{
            f"{_CACHE}.x_save__mutmut_{n}": "the temp file's name is never read: it is renamed over the kept "
            "file at once"
            for n in (3, 5, 6, 7)
        },
    }
)
_TREES = "grimoire_cli.git.trees"
_NAMED_ONLY = "`where` only names the text in a Damaged error, which is caught: the same entries are parsed"
EQUIVALENT.update(
    {
        f"{_TREES}.x__blob_of__mutmut_15": "`hash-object --stdin` does not fail (it writes nothing; a missing git "
        "raises): the fallback is never used",
        f"{_TREES}.x_picked__mutmut_21": "`XXXX` is one word: a commit with no parents, skipped as the empty "
        "listing's none",
        f"{_TREES}.xǁTreeǁcopy_of__mutmut_22": "`get(None)` answers None: no entry is under None",
        f"{_TREES}.xǁTreeǁget__mutmut_6": _NAMED_ONLY,
        **{f"{_TREES}.xǁTreeǁload__mutmut_{n}": _NAMED_ONLY for n in (9, 16, 17)},
    }
)
_CAST = "`typing.cast` returns its value, whatever type it names"
_SAME_HIGHEST = "replacing the highest number by an equal one changes nothing"
_RENUMBER = "grimoire_cli.git.renumber"
_FALSE = "`check` is only tested for truth: None and False are both false"
_ONE_ARG = "git gives post-merge and post-rewrite one argument: their first two are their first"
_NAMED_COMMITS = (
    "the versions are commits git has just named (rev-parse, merge-base, its state files): a diff between "
    "them does not fail"
)
EQUIVALENT.update(
    {
        **{f"{_RENUMBER}.x__still_meant__mutmut_{n}": _ENCODING for n in (5, 7, 10)},
        f"{_RENUMBER}.x__still_meant__mutmut_13": "`XXXX` holds no id line: a missing file holds no ids either way",
        **{f"{_RENUMBER}.x__repeated_ids__mutmut_{n}": _ENCODING for n in (6, 8, 11)},
        **{f"{_RENUMBER}.x_plan__mutmut_{n}": _ONE_ARG for n in (4, 81)},
        f"{_RENUMBER}.x_plan__mutmut_10": _FALSE,
        f"{_RENUMBER}.x_fixup__mutmut_1": "every caller passes `stdin` (Grimoire.merge_fixup)",
        **{
            f"{_RENUMBER}.x_fixup__mutmut_{n}": "outside a work tree git finds no git dir either, and a work tree "
            "always has one: `root` decides alone"
            for n in (16, 19)
        },
        f"{_RENUMBER}.x_fixup__mutmut_56": "a scope's own result gathers renames, lifecycle and notes: its "
        "operation is never read",
        f"{_RENUMBER}.x__scope_changes__mutmut_12": "only a rebase or a cherry-pick keeps renames in git's state "
        "(a merge cannot start while one is under way): prior_renames finds none for a merge",
        f"{_RENUMBER}.x__scope_changes__mutmut_42": _FALSE,
        **{f"{_RENUMBER}.x__scope_changes__mutmut_{n}": _NAMED_COMMITS for n in (45, 52)},
        f"{_RENUMBER}.x__merged_by_driver__mutmut_18": _FALSE,
        **{f"{_RENUMBER}.x__merged_by_driver__mutmut_{n}": _NAMED_COMMITS for n in (21, 27)},
        **{f"{_RENUMBER}.x__changes__mutmut_{n}": _CAST for n in (71, 75, 76, 107, 111, 112)},
        f"{_RENUMBER}.x__changes__mutmut_1": "its one caller (`_scope_changes`) passes `ours_yield`",
        f"{_RENUMBER}.x__changes__mutmut_6": "`include_archive` is True by default",
        f"{_RENUMBER}.x__changes__mutmut_125": "where ours' commit is the keeper, a new Tree of it holds what "
        "`start_tree` holds",
        f"{_RENUMBER}.x__changes__mutmut_96": "in a pair, exactly one entry is new exactly when exactly one is ours",
        f"{_RENUMBER}.x__scope_changes__mutmut_132": "with no archive change on either side each archived "
        "copy is the base's on both: the mapping renames only ids new since, so there is no lifecycle to carry",
        f"{_RENUMBER}.x__scope_changes__mutmut_50": "the mutant asks whether ours' archive differs from theirs': it "
        "does wherever an entry is archived on one side only, the one case with a lifecycle to carry (archived "
        "alike on both sides, both copies are one)",
        **{f"{_RENUMBER}.x__lifecycle__mutmut_{n}": _ENCODING for n in (9, 11, 15)},
        **{
            f"{_RENUMBER}.x__lifecycle__mutmut_{n}": "the store read the entry's file as UTF-8 (one that is not is "
            "damaged, and its entries skipped): there is no byte to replace"
            for n in (10, 12, 16, 17)
        },
        f"{_RENUMBER}.x__lifecycle__mutmut_1": "its one caller (`_changes`) passes `ours_yield`",
        **{
            f"{_RENUMBER}.x__lifecycle__mutmut_{n}": "the store parsed the entry from this very file, whose id "
            "lines `ids_in` finds: the default is never used"
            for n in (21, 23, 24)
        },
        **{
            f"{_RENUMBER}.x__scope_changes__mutmut_{n}": "outside a rebase `strays` is only read through `or {}` "
            "and `written` only tested for truth: None and {} alike"
            for n in (61, 62)
        },
    }
)
_NUMBERING = "grimoire_cli.git.numbering"
EQUIVALENT.update(
    {
        **{f"{_NUMBERING}.x_renumbering__mutmut_{n}": _CAST for n in (37, 41, 42, 53, 57, 58)},
        f"{_NUMBERING}.x_renames_since__mutmut_18": "the keys `_arrived` gives are identities, which hold a "
        'content line: neither `""` nor `XXXX` is one',
        f"{_NUMBERING}.x_identity__mutmut_2": "`keeping` is only tested for truth: None and False alike",
        **{
            f"{_NUMBERING}.x_identity__mutmut_{n}": "only the piece before the first colon is read, however "
            "many splits follow"
            for n in (17, 21)
        },
        f"{_NUMBERING}.xǁNumbersǁ__init____mutmut_8": _SAME_HIGHEST,
    }
)
_MERGE = "grimoire_cli.git.merge"
EQUIVALENT.update(
    {
        **{
            f"{_MERGE}.x__other_copy__mutmut_{n}": "a block (`ids_in`) starts at its `- id:` line: its first "
            "item is that mapping, or the parse raises"
            for n in (9, 15)
        },
        f"{_MERGE}.x_merged_lifecycle__mutmut_2": "only the lifecycle fields of the result are kept, and the "
        "entry as added holds none of them: a base of None gives them alike",
        f"{_MERGE}.x_merge_entry__mutmut_4": "`conflict` is only tested for truth (merge_texts, "
        "renumber._lifecycle): None and False alike",
        f"{_MERGE}.x__cache_key__mutmut_20": "`XX--format=…XX` is one more pattern, which no ref matches: git's "
        "default format holds each remote ref's name and object id too, so the key changes alike",
        f"{_MERGE}.x__cache_key__mutmut_36": "a FETCH_HEAD git writes never reads `XXXX`: any constant for its "
        "absence keys alike",
        f"{_MERGE}.x__by_lines__mutmut_2": "`Path.cwd()` and no cwd (the process's own) are one folder",
        **{f"{_MERGE}.x__by_lines__mutmut_{n}": _ENCODING for n in (16, 18, 22)},
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "a blank text parses to no entries: parsing it or not gives the "
            "same empty lists"
            for n in (4, 11, 18)
        },
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "renaming by an empty mapping changes nothing: the test only "
            "spares the copies"
            for n in (72, 79, 86)
        },
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "the conflict's lines are joined with a line break again: one "
            "piece holding them all writes the same text"
            for n in (228, 239)
        },
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "`rstrip()` strips spaces and tabs too, and no "
            "emitted line ends in one (the emitter quotes a value with trailing blanks)"
            for n in (224, 235)
        },
        f"{_MERGE}.x_merge_texts__mutmut_150": "`_other_copy` never answers None (its mutants 9 and 15): the loop "
        "never stops there",
        f"{_MERGE}.x_merge_texts__mutmut_156": "lifecycle fields equal to the archived copy's own rewrite it with "
        "the values it has: the same text",
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "`where` names the file only in rewrite's errors, which the "
            "merge never meets: its changes are keyed by ours' own ids and spans, just parsed"
            for n in (283, 290)
        },
        f"{_MERGE}.x_merge_file__mutmut_20": "`UTF-8` names the same codec",
        **{f"{_MERGE}.x_global_mapping__mutmut_{n}": _CAST for n in (35, 68, 244)},
        **{
            f"{_MERGE}.x_merge_file__mutmut_{n}": "the temp file is renamed onto ours as soon as it is written: "
            "its name is never left behind nor read"
            for n in (111, 112)
        },
        **{f"{_MERGE}.x_merge_file__mutmut_{n}": _ENCODING for n in (114, 116, 118)},
        f"{_MERGE}.x_merge_texts__mutmut_110": "theirs holds only mappings by then: an item that is no entry sent "
        "the file to the line merge above",
        **{
            f"{_MERGE}.x_merge_texts__mutmut_{n}": "merge_file catches this Damaged and reads only its message: "
            "its kind is never seen"
            for n in (33, 37, 41, 42)
        },
        f"{_MERGE}.x_merge_file__mutmut_55": "git runs the driver in the repository and `root` is found from the "
        "working directory: the config found from it (no path given) is the same",
        f"{_MERGE}.x_global_mapping__mutmut_214": "git runs the driver in the repository and `echoes` names no "
        "path: its log reads the same from any folder of it",
        f"{_MERGE}.x__prior__mutmut_3": "with no sides `renames_here` never finds a block, so it never calls the key",
        f"{_MERGE}.x_global_mapping__mutmut_47": "a single pick's commits, once found from the file, are in the "
        "key, and the mapping is worked out from the commits alone (`files` stand in only where git cannot list "
        "a tree): a kept one is the one the run would work out",
        f"{_MERGE}.x_global_mapping__mutmut_179": "only the renames not in `prior` are added to the records: "
        "when none is new, saving rewrites the records as they were read",
        f"{_MERGE}.x_global_mapping__mutmut_175": "a rename saved with no block's memory matches no block either way: "
        '`memory_of("")` and `memory_of("XXXX")` are the key of no entry (`renames_here` then goes by the id alone)',
        f"{_MERGE}.x_global_mapping__mutmut_203": "a kept rename's new id holds, on ours, the replay of the memory "
        "base holds under the old id; where one side alone holds it in this file (archived since), the archived "
        "copy already has every lifecycle field ours' copy has (the same record counts once), so taking the pair "
        "for a memory both added changes nothing (`merge._held_elsewhere`)",
    }
)
_ADDING = "grimoire_cli.memory.adding"
_WINDOW = (
    "the per-length window and the index only narrow what is compared: the same duplicates are found "
    "(tests/test_add.py: the bulk lookup finds what a full scan finds)"
)
EQUIVALENT.update(
    {
        f"{_ADDING}.x__locate__mutmut_14": _CAST,
        **{f"{_ADDING}.xǁ_Batchǁduplicates__mutmut_{n}": _WINDOW for n in (1, 2, 3, 9, 12, 34, 36, 38)},
        **{f"{_ADDING}.x_prepare__mutmut_{n}": _WINDOW for n in (4, 7, 8)},
        f"{_ADDING}.x__prepare__mutmut_217": _WINDOW,
        f"{_ADDING}.x__prepare__mutmut_224": "the score is read only beside a near duplicate, which an entry "
        "not checked never has",
        f"{_ADDING}.xǁ_Existingǁget__mutmut_12": "every caller leaves `default` None: what it gets for a miss",
        f"{_ADDING}.xǁ_Batchǁadded__mutmut_3": "an entry is superseded at most once in a batch (a second is "
        "refused: already superseded), so `updates` holds no earlier edit of it",
        f"{_ADDING}.xǁ_Takenǁadd__mutmut_1": "every id added parses, and its day was read before it is added "
        "(check_id's `in taken`, fresh's `of_day`): `of_day` holds it too",
        **{
            f"{_ADDING}.xǁ_Takenǁadd__mutmut_{n}": "an id's day is always read (check_id's `in taken`, fresh's "
            "`of_day`) before the id is added: `_added` is never read after it"
            for n in (6, 7)
        },
        f"{_ADDING}.xǁ_Takenǁadd__mutmut_15": _SAME_HIGHEST,
        **{
            f"{_ADDING}.xǁ_Takenǁ__contains____mutmut_{n}": "an id that does not parse is asked only by the "
            "related check, after `existing` (the same `by_id` lookup) found nothing: `by_id` is false here"
            for n in (11, 12)
        },
        f"{_ADDING}.x__unlinked__mutmut_54": "`replaced` is set only for an entry this batch marked superseded "
        "by this one (`_Batch.added`): the second test never fails when it is",
        f"{_ADDING}.xǁ_Takenǁ__contains____mutmut_10": "an id that does not parse is refused either way: "
        "here by the related check, or by the entry's schema (related_memories' pattern) when a damaged "
        "file mentions it",
        f"{_ADDING}.xǁ_Batchǁchat__mutmut_3": "chat() is called only for a request of a configured chat "
        "category: its category is never empty",
        f"{_ADDING}.x__unlinked__mutmut_62": "rejections have distinct indexes, which come first in the tuple: "
        "sorted alike",
        # Session 12: what test_write_pinned's last tests leave alive.
        **{f"{_ADDING}.x_add_many__mutmut_{n}": _WINDOW for n in (13, 17, 19)},
        **{f"{_ADDING}.xǁ_Batchǁ__init____mutmut_{n}": _WINDOW for n in (1, 5)},
        f"{_ADDING}.x__prepare__mutmut_219": _WINDOW,
        f"{_ADDING}.xǁ_Batchǁ__init____mutmut_2": "the one caller that takes `near` by default (prepare, for mem "
        "compact) reads no near duplicate: its entry supersedes the ones it is near",
        **{
            f"{_ADDING}.xǁ_Batchǁ_identities__mutmut_{n}": "only a procedure's schema allows `name` and only an "
            "insight's `rule_id`: another kind's request holding one is refused by its schema, whatever holder "
            "it was given (tests/test_write_pinned.py)"
            for n in (18, 36)
        },
        f"{_ADDING}.x__prepare__mutmut_46": "`existing.get` of a false id finds nothing (None matches no row; "
        "by_id keys an entry without an id under None, not ''): a request that supersedes nothing gets None "
        "either way",
        f"{_ADDING}.x__prepare__mutmut_238": "Entry's third parameter (`line`) is None by default",
        f"{_ADDING}.xǁ_Takenǁof_day__mutmut_16": "a day is read (check_id's `in taken`, fresh's `of_day`) before "
        "any id of it is added: `_added` holds none of its ids when it is",
        **{
            f"{_ADDING}.xǁ_Existingǁprefetch__mutmut_{n}": "prefetch only fills the cache `get` reads: an id "
            "it leaves out is read alone when asked for, one read again is read alike, and an id that is no "
            "text matches no row"
            for n in (3, 4, 5, 6, 7, 8)
        },
    }
)
_STORE = "grimoire_cli.storage.store.xǁStoreǁ"
_ONE_MORE_PASS = (
    "the digest check only spares a pass: a file taken for changed is synced and compared again, and the "
    "second pass finds the rows up to date"
)
EQUIVALENT.update(
    {
        f"{_STORE}_current__mutmut_49": _ONE_MORE_PASS,
        **{
            f"{_STORE}_current__mutmut_{n}": "`rows` is only tested for truth: None and False are both false"
            for n in (18, 33)
        },
        f"{_STORE}_current__mutmut_28": "`_fresh` only spares the next read a stat, and `commit` takes the "
        "file out of it once the write lands",
        f"{_STORE}by_id__mutmut_17": "a row that is no mapping has no id (NULL), which `IN` never matches: "
        "by_ids never returns one",
        f"{_STORE}by_id__mutmut_46": _CAST,
        f"{_STORE}commit__mutmut_7": _CAST,
        f"{_STORE}refresh__mutmut_1": "`_recovered` is only tested for truth: None and False are both false",
        f"{_STORE}ids_in_damaged__mutmut_12": _ENCODING,
        f"{_STORE}new_file__mutmut_29": _ENCODING,
        **{
            f"{_STORE}_changed__mutmut_{n}": "the stat's stamp only spares a read: without it (or without the "
            "touched file's new stamp recorded) the file is read and hashed, and found the same"
            for n in (20, 35)
        },
        f"{_STORE}_changed__mutmut_41": "a file the catalog has no record of has no chunk counts: {} either way",
        f"{_STORE}_reread__mutmut_5": "given None for the flag, a worker prepares an entry that says `archived: "
        "true` as before and fails on any other (`int(None)`), and `_gathered` then parses that file here, where "
        "the flag is not needed: the same rows, only slower",
        **{
            f"{_STORE}_changed__mutmut_{n}": "a file whose parse fails is kept out of the paths a read asks for "
            "(`readable`), and a write refuses it: rows left for it answer nothing"
            for n in (49, 60)
        },
        **{
            f"{_STORE}new_file__mutmut_{n}": "new_file is asked only for a configured category, and every kind "
            "has its line in `_ADD_WITH`"
            for n in (11, 13, 15, 17, 18)
        },
        **{
            f"{_STORE}check_writable__mutmut_{n}": "memory is off only by a config file's `enabled: false`: "
            "`config.path` is never None here"
            for n in (4, 6, 7)
        },
        f"{_STORE}__init____mutmut_19": "`lock()` sets `_staged` before anything is staged or checked",
        f"{_STORE}__init____mutmut_20": "`_recovered` is only tested for truth: None and False are both false",
        "grimoire_cli.storage.handed.xǁHandedǁ__init____mutmut_2": "`_reading` is only tested for truth: None "
        "and False are both false",
        f"{_STORE}recover_if_needed__mutmut_2": "`writing` is only tested for truth: None and False are both false",
        **{
            key: "a recovery again finds no journal: it only costs a check"
            for key in (
                f"{_STORE}_recover__mutmut_6",
                f"{_STORE}_recover__mutmut_7",
                f"{_STORE}_sync__mutmut_2",
                f"{_STORE}_sync__mutmut_3",
            )
        },
        **{
            f"{_STORE}_reread__mutmut_{n}": "the number of parse workers only changes speed: the same rows"
            for n in (15, 17)
        },
        **{
            key: "`_fresh` only spares the next read a stat"
            for key in (f"{_STORE}_reread__mutmut_29", f"{_STORE}_sync__mutmut_34")
        },
        f"{_STORE}_sync__mutmut_38": "`readable` is only tested for truth: None and False are both false",
        f"{_STORE}_sync__mutmut_39": "a file whose parse fails has no rows (`_index` drops them): among the "
        "paths a query asks for, it answers nothing",
        **{
            f"{_STORE}_sync__mutmut_{n}": "a query asks only for configured paths: the rows of a file no longer "
            "configured answer nothing, forgotten or not"
            for n in (48, 50)
        },
        **{
            f"{_STORE}_index__mutmut_{n}": "`prepared` and `counts` are what the parse workers computed, reused: "
            "given none, the catalog computes the same"
            for n in (7, 8, 14, 15)
        },
    }
)
# Survivors a test does kill, but not under mutmut: their code runs once per
# process (at import, or filling a cache) before mutmut forks the process that
# tests the mutant; the fresh-process checks kill them. Why, for the report.
_CONNECTION = "grimoire_cli.storage.catalog.connection."
_CASE = "SQLite reads keywords and pragma names in any case"
_TRUTH = "only tested for truth: None and False are both false"
_FTS5 = (
    "an FTS5 expression SQLite cannot parse fails with `fts5: syntax error near …`, which holds both words, "
    "and mem's expressions are quoted terms (no column filter or other FTS5 error): either word tells it"
)
EQUIVALENT.update(
    {
        **{
            f"{_CONNECTION}{name}": _CASE
            for name in (
                "x__epoch__mutmut_4",
                "x_bump_epoch__mutmut_3",
                *(f"xǁConnectionǁ_open_file__mutmut_{n}" for n in (12, 13, 16, 17, 20, 21, 24, 28)),
                "xǁConnectionǁhold__mutmut_5",
                "xǁConnectionǁrelease__mutmut_5",
            )
        },
        **{
            f"{_CONNECTION}x__epoch__mutmut_{n}": "the message is never shown: the error only moves the process "
            "to memory (`hold`, `transaction` catch every sqlite3 error)"
            for n in (7, 8, 9)
        },
        f"{_CONNECTION}xǁConnectionǁ__init____mutmut_3": f"`in_memory` is {_TRUTH}",
        **{
            f"{_CONNECTION}xǁConnectionǁ{name}": f"`_has_functions` is {_TRUTH}"
            for name in ("__init____mutmut_10", "_drop_to_memory__mutmut_5")
        },
        **{
            f"{_CONNECTION}xǁConnectionǁ{name}": "`_has_pow` '' is false: the recency then calls the registered "
            "Python function, `scoring.recency_of`, which computes what SQLite's pow() does (C's pow, as "
            "Python's ** is)"
            for name in ("__init____mutmut_12", "_drop_to_memory__mutmut_7")
        },
        f"{_CONNECTION}xǁConnectionǁ__init____mutmut_13": "`local_dir` is set by the store right after "
        "(`Store.__init__`), before any read",
        f"{_CONNECTION}xǁConnectionǁ_drop_to_memory__mutmut_1": "a process moves to memory once and never back "
        "(`in_memory` stays true, and `read`/`transaction` re-raise there): `switches` only goes from 0 to 1",
        f"{_CONNECTION}xǁConnectionǁ_drop_to_memory__mutmut_8": "the connection the failure left is replaced and "
        "never used again: not closing it keeps one handle until the process ends, once per process",
        f"{_CONNECTION}xǁConnectionǁ_open_file__mutmut_5": "sqlite3's default timeout is 5 seconds too",
        f"{_CONNECTION}xǁConnectionǁ_open_file__mutmut_6": "sqlite3's default isolation only opens a transaction "
        "before a data change outside one, and every write mem makes is inside its own BEGIN … COMMIT",
        f"{_CONNECTION}xǁConnectionǁ_open_file__mutmut_9": "how long a locked catalog is waited for before the "
        "move to memory (5 or 6 s): the same answer; speed is measured, not asserted",
        f"{_CONNECTION}xǁConnectionǁread__mutmut_6": "every caller passes a list, a tuple or a dict: sqlite3 takes "
        "a list as the tuple of it",
        **{f"{_CONNECTION}xǁConnectionǁread__mutmut_{n}": _FTS5 for n in (8, 10, 11, 13, 14, 15, 17)},
        f"{_CONNECTION}xǁConnectionǁread__mutmut_9": "it differs only in memory, where no read fails but an FTS5 "
        "expression's (the tables are this process's own), which says `syntax`",
    }
)


BEFORE_THE_FORK: dict[str, str] = {
    **{
        f"grimoire_cli.guard.scan.xǁ_Compiledǁ__init____mutmut_{n}": "`_COMPILED` is built at import" for n in (1, 2, 3)
    },
    **{
        f"grimoire_cli.guard.scan.xǁ_Compiledǁhas_shape__mutmut_{n}": "each shape is compiled once, before the fork"
        for n in (3, 4, 5, 6, 7, 11, 14)
    },
}


# Survivors no test kills, each with why: not equivalent, so still counted as
# survivors, but what it would take is written down.
SURVIVORS: dict[str, str] = {}
