{
  "targets": [
    {
      "target_name": "sherlock_deflate",
      "sources": ["common/deflate/native/deflate.c"],
      "libraries": ["-ldeflate"],
      "cflags": ["-O2", "-Wall", "-Wextra"]
    }
  ]
}
