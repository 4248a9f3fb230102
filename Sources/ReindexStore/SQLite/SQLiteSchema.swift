import ReindexSystem

/// The index database's schema, as numbered migrations applied in order (`PRAGMA user_version`).
enum SQLiteSchema {
    // The column lists statements name, from the attribute table, each made once (the writer's
    // statements are prepared per item on some paths).

    /// The full-text columns (`items_fts`, `staged_undo`), in the attribute table's order.
    static let fullTextColumns = AttributeSchema.searched.joined(separator: ", ")
    /// The same, of the full-text table aliased `f`.
    static let fullTextColumnsOfF = AttributeSchema.searched.map { "f." + $0 }.joined(separator: ", ")
    /// `?2, ?3, …`: the full-text columns' values after the row id (?1).
    static let fullTextParameters = parameters(from: 2, count: AttributeSchema.searched.count)

    /// The items' filter columns, in the attribute table's order.
    static let filterColumns = AttributeSchema.filterColumns.joined(separator: ", ")

    /// `?first, ?first+1, …`, `count` parameters.
    static func parameters(from first: Int, count: Int) -> String {
        (first..<first + count).map { "?\($0)" }.joined(separator: ", ")
    }

    static let migrations: [String] = [
        // 1: items with generations, full-text index, request queue, run history.
        """
        CREATE TABLE bundles(
            key TEXT PRIMARY KEY,
            identifier TEXT NOT NULL,
            live_gen INTEGER NOT NULL DEFAULT 0,
            version TEXT,
            fingerprint TEXT,
            first_seen REAL,
            last_seen REAL,
            missing_since REAL
        );
        CREATE TABLE items(
            id INTEGER PRIMARY KEY,
            bundle TEXT NOT NULL,
            gen INTEGER NOT NULL,
            uid TEXT NOT NULL,
            domain TEXT,
            expires REAL,
            attributes TEXT NOT NULL,
            UNIQUE(bundle, gen, uid)
        );
        CREATE INDEX items_domain ON items(bundle, gen, domain) WHERE domain IS NOT NULL;
        CREATE INDEX items_expires ON items(expires) WHERE expires IS NOT NULL;
        CREATE VIRTUAL TABLE items_fts USING fts5(
            title, displayName, alternateNames, contentDescription, textContent, keywords, authors,
            tokenize = 'unicode61 remove_diacritics 2',
            prefix = '2 3'
        );
        CREATE TABLE requests(
            id INTEGER PRIMARY KEY,
            bundle TEXT NOT NULL,
            bundle_identifier TEXT NOT NULL,
            kind TEXT NOT NULL,
            identifiers TEXT,
            reason TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL DEFAULT 5,
            next_attempt REAL NOT NULL,
            last_error TEXT,
            client_state TEXT,
            created REAL NOT NULL,
            updated REAL NOT NULL
        );
        CREATE INDEX requests_due ON requests(state, next_attempt);
        CREATE INDEX requests_bundle ON requests(bundle, state);
        CREATE TABLE runs(
            id INTEGER PRIMARY KEY,
            request_id INTEGER,
            bundle TEXT NOT NULL,
            kind TEXT NOT NULL,
            reason TEXT NOT NULL,
            started REAL NOT NULL,
            ended REAL NOT NULL,
            outcome TEXT NOT NULL,
            put INTEGER NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0,
            rejected INTEGER NOT NULL DEFAULT 0,
            error TEXT
        );
        CREATE INDEX runs_bundle ON runs(bundle, id);
        """,
        // 2: the expiration an item's refresh was last asked for (so it is asked once per expiration).
        """
        ALTER TABLE items ADD COLUMN refresh_asked_for REAL;
        """,
        // 3: staging in short transactions (see StagedWrites): the batch a reindexAll row was
        // written in and the generation's last committed batch, so what came after the last
        // batch/commit can be told apart and discarded; live stagings (reindexItems, `put`) with
        // their deletions; and the committed rows a pending batch replaced, to restore on failure.
        """
        ALTER TABLE items ADD COLUMN batch INTEGER;
        CREATE TABLE staged_generations(bundle TEXT NOT NULL, gen INTEGER NOT NULL, committed_batch INTEGER NOT NULL, PRIMARY KEY(bundle, gen));
        CREATE TABLE stagings(
            id INTEGER PRIMARY KEY,
            bundle TEXT NOT NULL,
            request_id INTEGER,
            pid INTEGER NOT NULL,
            pid_start INTEGER NOT NULL,
            started REAL NOT NULL
        );
        CREATE TABLE staged_deletes(
            staging INTEGER NOT NULL,
            kind TEXT NOT NULL,
            value TEXT,
            counted INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX staged_deletes_staging ON staged_deletes(staging);
        CREATE TABLE staged_undo(
            request INTEGER NOT NULL,
            uid TEXT NOT NULL,
            domain TEXT,
            expires REAL,
            attributes TEXT NOT NULL,
            refresh_asked_for REAL,
            batch INTEGER,
            title, displayName, alternateNames, contentDescription, textContent, keywords, authors
        );
        CREATE INDEX staged_undo_request ON staged_undo(request);
        CREATE TABLE retired_generations(bundle TEXT NOT NULL, gen INTEGER NOT NULL, PRIMARY KEY(bundle, gen));
        """,
        // 4: the last progress a running request's extension reported, for `status`.
        """
        ALTER TABLE requests ADD COLUMN progress TEXT;
        """,
        // 5: custom attributes. The declarations in effect for each bundle (JSON, recorded when a
        // reindexAll is acknowledged); the text of searchable custom attributes, one full-text
        // row per item and attribute (row id = item id × 64 + the attribute's slot, so an item's
        // rows are one range); and that text for committed rows kept aside by a replacement.
        """
        ALTER TABLE bundles ADD COLUMN attributes TEXT;
        CREATE VIRTUAL TABLE attributes_fts USING fts5(
            name UNINDEXED, value,
            tokenize = 'unicode61 remove_diacritics 2'
        );
        ALTER TABLE staged_undo ADD COLUMN custom TEXT;
        """,
        // 6: indexes for filters. contentType, rating, rankingHint and the four dates (as seconds)
        // in columns of their own, written with every item (StagedWrites) and indexed, so a
        // selective filter or a sort by one of them reads an index range instead of every item's
        // JSON. Existing items are filled in from their JSON (reindex_seconds is registered first).
        // rating's index carries the sort's tie-breakers (bundle, uid), since ratings have few
        // distinct values: a first page of --sort rating sorts nothing; read backwards for
        // rating:desc, it sorts only the top rating's ties (ties stay ascending). A second,
        // descending index cost 1.6× the time of a 300k-item `put`; this one, 1.1×. No index here
        // holds gen: publishing a staging moves its rows to the live gen, and an index on gen
        // would be rewritten for every row (3.6× the time of that `put`).
        """
        ALTER TABLE items ADD COLUMN content_type TEXT;
        ALTER TABLE items ADD COLUMN rating REAL;
        ALTER TABLE items ADD COLUMN ranking_hint REAL;
        ALTER TABLE items ADD COLUMN start_date REAL;
        ALTER TABLE items ADD COLUMN end_date REAL;
        ALTER TABLE items ADD COLUMN created_date REAL;
        ALTER TABLE items ADD COLUMN modified_date REAL;
        UPDATE items SET \(IndexStore.filterColumnsFromJSON) WHERE attributes != '{}';
        CREATE INDEX items_content_type ON items(content_type) WHERE content_type IS NOT NULL;
        CREATE INDEX items_rating ON items(rating, bundle, uid) WHERE rating IS NOT NULL;
        CREATE INDEX items_start_date ON items(start_date) WHERE start_date IS NOT NULL;
        CREATE INDEX items_end_date ON items(end_date) WHERE end_date IS NOT NULL;
        CREATE INDEX items_created_date ON items(created_date) WHERE created_date IS NOT NULL;
        CREATE INDEX items_modified_date ON items(modified_date) WHERE modified_date IS NOT NULL;
        """,
        // 7: indexes for the custom attributes a manifest declares, and for rankingHint in
        // relevance. `item_attributes` holds each declared number, date (seconds), bool (0/1),
        // string and strings (one row per element) value of an item, keyed by the item's row id,
        // so it moves with the item through staging and publication (which change `gen`, not
        // `id`); (name, value, item) indexes serve filters and sorts. The rows of items written
        // before this version are filled in by `IndexStore.fillTypedAttributes` in the same
        // transaction. `staged_undo.typed` keeps a kept-aside row's values (a JSON array of
        // [name, num, text]). `items_ranking_hint` lists the items with a nonzero hint, for the
        // relevance walk (docs/QUERIES.md, "Relevance").
        """
        CREATE TABLE item_attributes(item INTEGER NOT NULL, name TEXT NOT NULL, num REAL, text TEXT);
        CREATE INDEX item_attributes_item ON item_attributes(item);
        CREATE INDEX item_attributes_num ON item_attributes(name, num, item) WHERE num IS NOT NULL;
        CREATE INDEX item_attributes_text ON item_attributes(name, text, item) WHERE text IS NOT NULL;
        ALTER TABLE staged_undo ADD COLUMN typed TEXT;
        CREATE INDEX items_ranking_hint ON items(ranking_hint) WHERE ranking_hint != 0;
        """,
        // 8: the client state an application ended its last batch with (`LocalIndex.endBatch`),
        // per bundle, written in the transaction that publishes the batch's items. `last_request`
        // is the highest request id that existed then: a reindexAll acknowledged later whose id
        // is not above it may have been running while the batch ended, and clears the state
        // (docs/SDK.md, "Indexing from an application"). Apart from `requests.client_state`,
        // which is an extension's, per request.
        """
        CREATE TABLE app_client_states(
            bundle TEXT PRIMARY KEY,
            state BLOB NOT NULL CHECK(length(CAST(state AS BLOB)) <= 250),
            written REAL NOT NULL,
            last_request INTEGER NOT NULL DEFAULT 0
        );
        """,
        // 9: rank lists (SQLite/RankLists.swift): for each common word or prefix searched, its
        // items in relevance order down to a boundary (`rank_lists.last_*`; NULL: the list holds
        // every item of the word), kept by every write; and the average length the score uses,
        // pinned while the lists are made for it.
        """
        CREATE TABLE rank_statistics(average REAL NOT NULL);
        CREATE TABLE rank_lists(
            key TEXT PRIMARY KEY,
            last_impact REAL, last_hint REAL, last_bundle TEXT, last_uid TEXT, last_item INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE rank_entries(
            list TEXT NOT NULL, impact REAL NOT NULL, hint REAL NOT NULL, bundle TEXT NOT NULL, uid TEXT NOT NULL, item INTEGER NOT NULL,
            PRIMARY KEY(list, impact DESC, hint DESC, bundle, uid, item)
        ) WITHOUT ROWID;
        CREATE INDEX rank_entries_item ON rank_entries(item);
        """,
        // 10: rank lists of two words together (SQLite/RankLists.swift), ordered by the rarities
        // they were made with (NULL for one word's list). A binary before this one would not keep
        // such a list, so it refuses the index.
        "ALTER TABLE rank_lists ADD COLUMN rarities BLOB;",
        // 11: the document frequencies searches counted (IndexStore+Relevance.swift), kept for
        // the next process: valid while the full-text index's structure record is the one in
        // `unit_frequencies_structure`, the one they were counted under.
        """
        CREATE TABLE unit_frequencies(phrase TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE unit_frequencies_structure(structure BLOB NOT NULL);
        """,
    ]
}
