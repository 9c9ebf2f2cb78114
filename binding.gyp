{
  "targets": [
    {
      "target_name": "sherlock_deflate",
      "sources": ["common/native/deflate.c"],
      "libraries": ["-ldeflate"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
