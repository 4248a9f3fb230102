import ReindexCommandLine

Reindex.main()
