// placeholder, written in this session
